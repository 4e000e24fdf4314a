/**
 * The query use case behind GET and POST `/data-sets/{id}/query`: which version a request means (the resolution
 * cache), that version's metadata (the metadata cache), the query resolved against it, and the engine that answers
 * (engine/choose.ts). It returns data — a page as JSON bytes, or every matching row as CSV records — and the routes
 * own the reply.
 */
import type { Db } from '../../db/database.js';
import { NotFoundError } from '../../errors.js';
import { escapeFormula } from '../csv-formula.js';
import type { DataSetVersionRow } from '../versions/access.js';
import { resolveVersionReused, type ResolvedVersionCache } from '../versions/resolved-version-cache.js';
import { withLabels } from './labels.js';
import {
  csvHeader,
  csvRecords,
  resolveQuery,
  writeResponseJson,
  type PageRows,
  type QueryEngineChooser,
  type QueryRequest,
  type ResolvedQuery,
  type VersionMeta,
  type VersionMetaCache,
} from './engine/index.js';

export interface QueryServiceOptions {
  db: Db;
  /** Version metadata, shared by every prefix the API is served at. */
  versionMetas: VersionMetaCache;
  /** Resolved public versions, shared likewise (QUERY_VERSION_CACHE_MS). */
  resolvedVersions: ResolvedVersionCache<DataSetVersionRow>;
  /** Which engine answers each query. */
  engines: QueryEngineChooser;
}

/** What a query addresses: the data set, the version it names (or none: the latest) and a preview token, if any. */
export interface QueryTarget {
  dataSetId: string;
  dataSetVersion: string | undefined;
  previewToken: string | undefined;
}

/** One page of results as the response's JSON (UTF-8 bytes), and the engine that answered. */
export interface QueryPage {
  json: Buffer;
  engine: string;
}

export interface QueryExportOptions {
  /** The export's own time bound (QUERY_CSV_TIMEOUT_MS), not the single queries' statement timeout. */
  timeoutMs?: number;
  /** Fires when the client is gone: the export stops at once. */
  signal?: AbortSignal;
}

export interface QueryCsvOptions extends QueryExportOptions {
  /** Counts the rows written (for the log line of an export that stops early). */
  onRows?: (rows: number) => void;
}

/** Every matching row of a query, a page at a time, with the version's metadata and the resolved query to write them. */
export interface QueryExport {
  meta: VersionMeta;
  query: ResolvedQuery;
  pages: AsyncIterable<PageRows>;
}

/** Every matching row as CSV: the header and the records, with labels, formulas neutralised. */
export interface QueryCsv {
  header: string[];
  records: AsyncIterable<string[]>;
}

/** Rows of an export read from the engine at a time: bounds its memory whatever the number of matching rows. */
const EXPORT_PAGE_ROWS = 2000;

export class QueryService {
  constructor(private readonly options: QueryServiceOptions) {}

  /** The version a query means. Public resolutions are cached briefly; preview-token ones never are. */
  private async resolveVersion(target: QueryTarget): Promise<DataSetVersionRow> {
    return resolveVersionReused(this.options.db, this.options.resolvedVersions, { ...target, policy: 'query' });
  }

  /**
   * The version's metadata and the query resolved against it (unknown ids, levels and periods become warnings or
   * 400s). Everything that can refuse the query refuses it here, before any row is read.
   */
  private async prepare(
    target: QueryTarget,
    request: QueryRequest,
  ): Promise<{ meta: VersionMeta; query: ResolvedQuery }> {
    const { db, versionMetas } = this.options;
    const version = await this.resolveVersion(target);
    if (!version.rows_table) {
      throw new NotFoundError(
        `Version ${version.major}.${version.minor} of data set ${target.dataSetId} has no data loaded.`,
      );
    }
    const meta = await versionMetas.load(db, version.id, version.rows_table);
    return { meta, query: resolveQuery(meta, request) };
  }

  /** One page of results; with `labels`, the label of every id in it beside them (labels.ts). */
  async page(target: QueryTarget, request: QueryRequest, options: { labels?: boolean } = {}): Promise<QueryPage> {
    const { meta, query } = await this.prepare(target, request);
    const engine = await this.options.engines.choose({ db: this.options.db, meta }, query, 'page');
    const { total, rows } = await engine.page(query, (query.page - 1) * query.pageSize, query.pageSize);
    const json = writeResponseJson(meta, query, rows, total);
    return { json: options.labels ? withLabels(meta, json) : json, engine: engine.name };
  }

  /** Every matching row (not one page), read from the engine a page at a time: what every export writes. */
  async exportRows(target: QueryTarget, request: QueryRequest, options: QueryExportOptions = {}): Promise<QueryExport> {
    const { meta, query } = await this.prepare(target, request);
    const engine = await this.options.engines.choose({ db: this.options.db, meta }, query, 'export');
    return { meta, query, pages: engine.pages(query, EXPORT_PAGE_ROWS, options) };
  }

  /** Every matching row as CSV records with labels. */
  async csv(target: QueryTarget, request: QueryRequest, options: QueryCsvOptions = {}): Promise<QueryCsv> {
    const { meta, query, pages } = await this.exportRows(target, request, options);
    async function* records(): AsyncGenerator<string[]> {
      let rows = 0;
      for await (const page of pages) {
        for (const record of csvRecords(meta, query, page)) yield record.map(escapeFormula);
        rows += page.count;
        options.onRows?.(rows);
      }
    }
    // Header cells are labels from the meta file, as open to formula tricks as the data cells.
    return { header: csvHeader(meta, query).map(escapeFormula), records: records() };
  }
}
