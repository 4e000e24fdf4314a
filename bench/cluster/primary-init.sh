#!/bin/sh
# docker-compose.yml's primary: let the replica container take its base backup and stream (replication connections
# from the compose network, password-checked). The script's embedded primary allows them from 127.0.0.1 by default.
echo "host replication all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
