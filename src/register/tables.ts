/** Kysely table types of the register schema. Filled in by the register migration's owner. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface RegisterTables {}
