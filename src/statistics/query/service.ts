/**
 * The query use case behind GET and POST `/data-sets/{id}/query`: which version a request means (the resolution
 * cache), that version's metadata (the metadata cache), and which engine answers (the in-memory row index or SQL).
 * The routes only parse the request and send what this returns.
 */
import type { FastifyReply } from 'fastify';
import type { Db } from '../../db/database.js';
import { NotFoundError } from '../../errors.js';
import { resolveDataSetVersion, type DataSetVersionRow } from '../versions/access.js';
import type { QueryRequest } from './engine/criteria.js';
import { streamQueryCsv } from './engine/csv-output.js';
import { runQuery, type QueryPage } from './engine/execute.js';
import { resolveQuery } from './engine/resolve.js';
import { streamQueryColumnar, type ColumnarFormat } from './http/columnar-output.js';
import { withLabels } from './labels.js';
import type { RowIndexStore } from './engine/row-index-store.js';
import type { ResolvedVersionCache, VersionMetaCache } from './engine/version-meta-cache.js';

export interface QueryServiceOptions {
  db: Db;
  /** Version metadata, shared by every prefix the API is served at. */
  versionMetas: VersionMetaCache;
  /** Resolved public versions, shared likewise (QUERY_VERSION_CACHE_MS). */
  resolvedVersions: ResolvedVersionCache<DataSetVersionRow>;
  /** The app's row indexes; without them every query runs on SQL. */
  rowIndexes?: RowIndexStore;
}

/** What a query addresses: the data set, the version it names (or none: the latest) and a preview token, if any. */
export interface QueryTarget {
  dataSetId: string;
  dataSetVersion: string | undefined;
  previewToken: string | undefined;
}

export class QueryService {
  constructor(private readonly options: QueryServiceOptions) {}

  /** The version a query means. Public resolutions are cached briefly; preview-token ones never are. */
  private async resolveVersion(target: QueryTarget): Promise<DataSetVersionRow> {
    const { db, resolvedVersions } = this.options;
    const key = `${target.dataSetId}|${target.dataSetVersion ?? ''}`;
    if (!target.previewToken) {
      const cached = resolvedVersions.get(key);
      if (cached) return cached;
    }
    const { version, viaPreviewToken } = await resolveDataSetVersion(db, { ...target, policy: 'query' });
    if (!viaPreviewToken) resolvedVersions.set(key, version);
    return version;
  }

  /**
   * The version's metadata and the query resolved against it (unknown ids, levels and periods become warnings or
   * 400s); it then runs as a page or a CSV export. Everything that can refuse the query refuses it here.
   */
  async prepare(target: QueryTarget, query: QueryRequest): Promise<PreparedQuery> {
    const { db, versionMetas, rowIndexes } = this.options;
    const version = await this.resolveVersion(target);
    if (!version.rows_table) {
      throw new NotFoundError(`Version ${version.major}.${version.minor} of data set ${target.dataSetId} has no data loaded.`);
    }
    const meta = await versionMetas.load(db, version.id, version.rows_table);
    const resolved = resolveQuery(meta, query);
    return {
      page: async (options = {}) => {
        const page = await runQuery(db, meta, resolved, { rowIndexes });
        return options.labels ? { ...page, json: withLabels(meta, page.json) } : page;
      },
      csv: (reply) => streamQueryCsv(db, meta, resolved, reply, rowIndexes),
      columnar: (reply, format) => streamQueryColumnar(db, meta, resolved, reply, format, rowIndexes),
    };
  }
}

/** A query ready to run on its version. */
export interface PreparedQuery {
  /** One page of results as JSON (UTF-8 bytes), with the labels of its ids when asked, and the engine that chose its rows. */
  page(options?: { labels?: boolean }): Promise<QueryPage>;
  /** Every matching row as CSV, streamed to `reply` (see streamQueryCsv for its limits). */
  csv(reply: FastifyReply): FastifyReply;
  /** Every matching row as Parquet or an Arrow IPC stream, streamed to `reply` with the CSV export's limits. */
  columnar(reply: FastifyReply, format: ColumnarFormat): Promise<FastifyReply>;
}
