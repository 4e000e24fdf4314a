/**
 * "Use this query in code": the same query as a curl line, R snippets for DfE's eesyapi and for httr2 + jsonlite (CRAN
 * only), and a Python snippet.
 * Each is meant to run as shown against the server the page came from. Pure functions, unit tested.
 */

/** Single-quotes a string for a POSIX shell. */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** A string literal for R or Python, double-quoted, with backslashes and quotes escaped. */
function quoted(text: string): string {
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
}

/** JSON indented by `indent` spaces, with any object or array that fits in `width` characters kept on one line. */
export function compactJson(value: unknown, indent = 2, width = 72, depth = 0): string {
  const flat = JSON.stringify(value);
  if (flat === undefined || flat.length + depth * indent <= width || value === null || typeof value !== 'object')
    return flat ?? 'null';
  const pad = ' '.repeat((depth + 1) * indent);
  const end = ' '.repeat(depth * indent);
  if (Array.isArray(value)) {
    return `[\n${value.map((v) => pad + compactJson(v, indent, width, depth + 1)).join(',\n')}\n${end}]`;
  }
  const entries = Object.entries(value as Record<string, unknown>).map(
    ([k, v]) => `${pad}${JSON.stringify(k)}: ${compactJson(v, indent, width, depth + 1)}`,
  );
  return `{\n${entries.join(',\n')}\n${end}}`;
}

export interface SnippetInput {
  /** The page's origin, e.g. `http://127.0.0.1:3000`. */
  origin: string;
  dataSetId: string;
  /** The POST URL (with `?dataSetVersion=` when a version is pinned). */
  postUrl: string;
  body: Record<string, unknown>;
  dataSetVersion?: string;
}

export function curlPost(input: SnippetInput): string {
  return `curl -sS -X POST ${shellQuote(input.postUrl)} -H 'Content-Type: application/json' -d ${shellQuote(JSON.stringify(input.body))}`;
}

export function curlGet(url: string): string {
  return `curl -sS ${shellQuote(url)}`;
}

export function curlCsv(input: SnippetInput): string {
  return `curl -sS -X POST ${shellQuote(input.postUrl)} -H 'Content-Type: application/json' -H 'Accept: text/csv' -d ${shellQuote(JSON.stringify(input.body))} -o query.csv`;
}

/**
 * The R lines that point DfE's eesyapi at this service, for any host and port (`server`): eesyapi builds its URLs in
 * `api_url()` from a fixed list of DfE hosts and has no base-URL argument, so they wrap `api_url` in the package
 * namespace for this R session (the rest of eesyapi is unchanged). docs/guides.md shows the same lines (a test
 * checks), so the guide and this page give one recipe. `extra` adds lines that adjust `url` before it is used.
 */
export function rUseServer(origin: string, extra = ''): string {
  return `server <- ${quoted(origin)}
# eesyapi has no base-URL option: point its URL builder at this server for this session.
local({
  original <- eesyapi::api_url
  utils::assignInNamespace("api_url", function(...) {
    url <- sub("^https://[^/]+/api/v[0-9.]+/", paste0(server, "/v1/"), original(...))${extra}
    url
  }, ns = "eesyapi")
})`;
}

/** R with eesyapi: `query_dataset(dataset_id, json_query = ...)` sends the same POST body. */
export function rSnippet(input: SnippetInput): string {
  // A pinned version goes into the query and meta URLs here: eesyapi's dataset_version is a number (2.0 would be "2").
  const pin = input.dataSetVersion
    ? `\n    # this query is for version ${input.dataSetVersion} of the data set (its data and its metadata)\n    if (grepl("/(query|meta)$", url)) url <- paste0(url, ${quoted(`?dataSetVersion=${input.dataSetVersion}`)})`
    : '';
  return `# eesyapi is not on CRAN: install.packages("remotes"); remotes::install_github("dfe-analytical-services/eesyapi")
library(eesyapi)

${rUseServer(input.origin, pin)}

data <- query_dataset(
  ${quoted(input.dataSetId)},
  json_query = ${quoted(JSON.stringify(input.body))}
)
head(data)
`;
}

/**
 * R that turns a query answer's `results` into one flat data frame with the indicator values as numbers (they arrive
 * as strings, and a suppressed value as a symbol such as "x", which becomes NA). docs/guides.md's httr2 recipe
 * defines the same function (a test checks), so the guide and this page give one recipe.
 */
export const R_AS_ROWS = `as_rows <- function(answer) {
  if (length(answer$results) == 0) return(data.frame())
  rows <- flatten(answer$results)
  values <- startsWith(names(rows), "values.")
  rows[values] <- lapply(rows[values], function(v) suppressWarnings(as.numeric(v)))
  rows
}`;

/** R with two CRAN packages only (httr2 and jsonlite), for machines that cannot install eesyapi from GitHub. */
export function rHttr2Snippet(input: SnippetInput): string {
  return `# Only CRAN packages: install.packages(c("httr2", "jsonlite"))
library(httr2)
library(jsonlite)

# Indicator values arrive as strings: as_rows makes them numbers (a suppressed value becomes NA).
${R_AS_ROWS}

query <- ${quoted(JSON.stringify(input.body))}

data <- request(${quoted(input.postUrl)}) |>
  req_body_raw(query, type = "application/json") |>
  req_perform() |>
  resp_body_json(simplifyVector = TRUE) |>
  as_rows()
head(data)
`;
}

export function pythonSnippet(input: SnippetInput): string {
  // JSON is a Python literal once its three keywords (outside strings) are spelt the Python way.
  const words: Record<string, string> = { true: 'True', false: 'False', null: 'None' };
  const body = compactJson(input.body, 4).replace(/"(?:[^"\\]|\\.)*"|\b(true|false|null)\b/g, (m, word?: string) =>
    word ? words[word]! : m,
  );
  return `import requests

query = ${body}

response = requests.post(
    ${quoted(input.postUrl)},
    json=query,
    timeout=60,
)
response.raise_for_status()
result = response.json()
print(result["paging"]["totalResults"], "rows")
for row in result["results"]:
    print(row["timePeriod"], row["locations"], row["filters"], row["values"])
`;
}
