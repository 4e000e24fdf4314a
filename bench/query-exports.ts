/**
 * `npm run bench`'s exports: every matching row of two queries (the whole data set unfiltered, and level REG) as CSV,
 * Parquet and Arrow, read to the last byte over HTTP while the server's RSS is sampled (Linux `/proc`, every 25 ms).
 */
import { readFileSync } from 'node:fs';

interface ExportRequest {
  method: string;
  path: string;
  body?: string;
}

/** The server's resident set size (Linux `/proc`), in MB; undefined elsewhere. */
function rssMb(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

interface ExportRun {
  seconds: number;
  bytes: number;
  /** The server's RSS growth over its RSS before the request, at its highest while the answer streamed. */
  rssGrowthMb?: number;
}

/** Every matching row of `variant` with `accept`: seconds to the last byte, bytes, and the server's RSS growth meanwhile. */
async function timeExport(
  url: string,
  variant: ExportRequest,
  accept: string,
  pid: number | undefined,
): Promise<ExportRun> {
  const before = rssMb(pid);
  let peak = before ?? 0;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid) ?? 0)), 25);
  const started = performance.now();
  try {
    const response = await fetch(`${url}${variant.path}`, {
      method: variant.method,
      headers: { accept, ...(variant.body ? { 'content-type': 'application/json' } : {}) },
      body: variant.body,
    });
    if (!response.ok) throw new Error(`${accept} export answered ${response.status}: ${await response.text()}`);
    let bytes = 0;
    const reader = response.body!.getReader();
    for (let step = await reader.read(); !step.done; step = await reader.read()) bytes += step.value.byteLength;
    const seconds = (performance.now() - started) / 1000;
    return {
      seconds: Math.round(seconds * 1000) / 1000,
      bytes,
      ...(before === undefined ? {} : { rssGrowthMb: Math.round((peak - before) * 10) / 10 }),
    };
  } finally {
    clearInterval(sampler);
  }
}

export const EXPORT_FORMATS = {
  csv: 'text/csv',
  parquet: 'application/vnd.apache.parquet',
  arrow: 'application/vnd.apache.arrow.stream',
} as const;

/**
 * Every matching row of two query shapes (the unfiltered data set and level REG) as CSV, Parquet and Arrow, `runs`
 * times each in turn: the median time to the last byte, Parquet's against CSV's, and the server's RSS growth.
 */
export async function measureExports(
  url: string,
  dataSetId: string,
  pid: number | undefined,
  runs: number,
  formats: string[],
) {
  const queries = [
    { name: 'unfiltered', variant: { method: 'GET', path: `/v1/data-sets/${dataSetId}/query` } as ExportRequest },
    {
      name: 'level REG',
      variant: { method: 'GET', path: `/v1/data-sets/${dataSetId}/query?geographicLevels.eq=REG` } as ExportRequest,
    },
  ];
  const results = [];
  for (const query of queries) {
    const byFormat: Record<string, ExportRun[]> = Object.fromEntries(formats.map((f) => [f, []]));
    for (let run = 0; run < runs; run++) {
      for (const format of formats)
        byFormat[format]!.push(
          await timeExport(url, query.variant, EXPORT_FORMATS[format as keyof typeof EXPORT_FORMATS], pid),
        );
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const summary = Object.fromEntries(
      Object.entries(byFormat).map(([format, list]) => [
        format,
        {
          medianSeconds: median(list.map((r) => r.seconds)),
          bytes: list[0]!.bytes,
          maxRssGrowthMb: Math.max(...list.map((r) => r.rssGrowthMb ?? 0)),
          runs: list,
        },
      ]),
    ) as unknown as Partial<
      Record<keyof typeof EXPORT_FORMATS, { medianSeconds: number; bytes: number; maxRssGrowthMb: number }>
    >;
    const ratio =
      summary.parquet && summary.csv
        ? Math.round((summary.parquet.medianSeconds / summary.csv.medianSeconds) * 100) / 100
        : undefined;
    const shown = Object.entries(summary).map(
      ([format, s]) => `${format} ${s.medianSeconds} s (${(s.bytes / 1e6).toFixed(1)} MB, RSS +${s.maxRssGrowthMb} MB)`,
    );
    console.log(
      `export ${query.name.padEnd(11)} ${shown.join('  ')}${ratio === undefined ? '' : `  Parquet/CSV ${ratio}x`}`,
    );
    results.push({
      name: query.name,
      path: query.variant.path,
      parquetToCsvTimeRatio: ratio,
      target: { parquetToCsvTimeRatioAtMost: 2, parquetRssGrowthMbBelow: 100 },
      ...summary,
    });
  }
  return results;
}
