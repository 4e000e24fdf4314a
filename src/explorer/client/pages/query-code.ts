/** The query page's "Download and share" and "Use this query in code" sections. */
import { ApiError, problemMessage } from '../api.js';
import { h, uid } from '../dom.js';
import { getUrl, postBody, queryPath, stateToSearch } from '../query.js';
import { compactJson, curlCsv, curlGet, curlPost, pythonSnippet, rHttr2Snippet, rSnippet } from '../snippets.js';
import type { QueryView } from './query-view.js';

/** The largest "all matching rows" CSV whose empty location columns are removed in the browser. */
const CSV_TIDY_LIMIT_BYTES = 20_000_000;

function codeBlock(title: string, text: string, testId: string): HTMLElement {
  const id = uid('code');
  const button = h(
    'button',
    {
      type: 'button',
      class: 'govuk-button govuk-button--secondary app-button--small',
      'aria-describedby': `${id}-h`,
      onclick: async () => {
        try {
          await navigator.clipboard.writeText(text);
          button.textContent = 'Copied';
        } catch {
          const range = document.createRange();
          range.selectNodeContents(pre);
          getSelection()?.removeAllRanges();
          getSelection()?.addRange(range);
          button.textContent = 'Selected: press Ctrl+C to copy';
        }
        setTimeout(() => (button.textContent = 'Copy'), 3000);
      },
    },
    'Copy',
  );
  const pre = h(
    'pre',
    { class: 'app-code', tabindex: '0', 'aria-labelledby': `${id}-h` },
    h('code', { 'data-code': testId }, text),
  );
  return h(
    'div',
    { class: 'app-code-block' },
    h('h3', { class: 'govuk-heading-s', id: `${id}-h` }, title),
    button,
    pre,
  );
}

/** A format of "all matching rows": its name in words, the API's `Accept` for it and the file's extension. */
interface RowsFormat {
  name: string;
  accept: string;
  extension: string;
}

/** Saves `blob` as a download named after the data set: `<title>-<suffix>.<extension>`. */
function saveFile(dataSetTitle: string, blob: Blob, suffix: string, extension = 'csv'): void {
  const url = URL.createObjectURL(blob);
  const a = h('a', {
    href: url,
    download: `${dataSetTitle.replace(/[^A-Za-z0-9]+/g, '-').toLowerCase()}-${suffix}.${extension}`,
  });
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

/** Downloads every matching row in `format` (CSV, Parquet or an Arrow IPC stream), telling `status` how it went. */
async function downloadRows(view: QueryView, status: HTMLElement, format: RowsFormat): Promise<void> {
  const { dataSet, dataSetId, meta, state } = view;
  status.textContent = `Preparing the ${format.name}…`;
  try {
    const { page: _p, pageSize: _s, ...csvBody } = postBody(state);
    const response = await fetch(queryPath(dataSetId, state), {
      method: 'POST',
      headers: { accept: format.accept, 'content-type': 'application/json' },
      body: JSON.stringify(csvBody),
    });
    if (!response.ok)
      throw new ApiError(
        response.status,
        problemMessage(response.status, await response.json().catch(() => undefined)),
        undefined,
      );
    let blob = await response.blob();
    // Some levels chosen: their empty neighbours' columns go (parsed here, so not for a very large file).
    if (format.extension === 'csv' && state.geographicLevels.length > 0 && blob.size < CSV_TIDY_LIMIT_BYTES) {
      const { withoutEmptyLocationColumns } = await import('../crosstab-csv.js');
      blob = new Blob(
        [
          withoutEmptyLocationColumns(
            await blob.text(),
            meta.geographicLevels.map((l) => l.label),
          ),
        ],
        { type: 'text/csv;charset=utf-8' },
      );
    }
    saveFile(dataSet.title, blob, 'query', format.extension);
    status.textContent = `Downloaded the ${format.name} (${blob.size.toLocaleString('en-GB')} bytes).`;
  } catch (error) {
    status.textContent = `The download failed: ${(error as Error).message}`;
  }
}

/** Downloads the table on screen as CSV, telling `status` how it went. */
async function downloadTable(view: QueryView, status: HTMLElement): Promise<void> {
  const shown = view.table;
  if (!shown) return;
  try {
    const { crossTabCsv } = await import('../crosstab-csv.js');
    saveFile(
      view.dataSet.title,
      new Blob([crossTabCsv(view.dataSet.title, shown)], { type: 'text/csv;charset=utf-8' }),
      'table',
    );
    status.textContent = 'Downloaded the table as shown (CSV).';
  } catch (error) {
    status.textContent = `The download failed: ${(error as Error).message}`;
  }
}

/** "Download and share": the table as shown, every matching row (CSV, Parquet or Arrow), and the permalink. */
export function takeAway(view: QueryView): HTMLElement {
  const permalink = `${location.origin}${location.pathname}?${stateToSearch(view.state)}`;
  const status = h('p', { class: 'govuk-body-s', 'aria-live': 'polite' });
  const download = (format: RowsFormat) => () => downloadRows(view, status, format);
  const permalinkInput = (view.permalinkInput = h('input', {
    class: 'govuk-input',
    id: 'permalink',
    type: 'text',
    readonly: true,
    value: permalink,
    'aria-describedby': 'permalink-hint',
  }));
  return h(
    'div',
    null,
    h(
      'div',
      { class: 'govuk-button-group' },
      h(
        'button',
        {
          type: 'button',
          class: 'govuk-button govuk-button--secondary',
          id: 'download-table',
          onclick: () => downloadTable(view, status),
        },
        'Download this table (CSV)',
      ),
      h(
        'button',
        {
          type: 'button',
          class: 'govuk-button govuk-button--secondary',
          id: 'download-csv',
          onclick: download({ name: 'CSV', accept: 'text/csv', extension: 'csv' }),
        },
        'Download all matching rows (CSV)',
      ),
      h(
        'button',
        {
          type: 'button',
          class: 'govuk-button govuk-button--secondary',
          id: 'download-parquet',
          onclick: download({ name: 'Parquet file', accept: 'application/vnd.apache.parquet', extension: 'parquet' }),
        },
        'Download all matching rows (Parquet)',
      ),
      h(
        'button',
        {
          type: 'button',
          class: 'govuk-button govuk-button--secondary',
          id: 'download-arrow',
          onclick: download({
            name: 'Arrow stream',
            accept: 'application/vnd.apache.arrow.stream',
            extension: 'arrows',
          }),
        },
        'Download all matching rows (Arrow)',
      ),
    ),
    status,
    h(
      'div',
      { class: 'govuk-form-group' },
      h('label', { class: 'govuk-label', for: 'permalink' }, 'Link to this query'),
      h(
        'div',
        { class: 'govuk-hint', id: 'permalink-hint' },
        'Opening this link shows the same choices, table layout and results.',
      ),
      permalinkInput,
    ),
  );
}

/** "Use this query in code": the GET URL, the POST body, curl, R (eesyapi; httr2 and jsonlite) and Python. */
export function codePanel(view: QueryView): HTMLElement {
  const { dataSetId, state } = view;
  const { page: _p, pageSize: _s, ...base } = postBody(state);
  const body = { ...base, page: 1, pageSize: 1000 };
  const postUrl = `${location.origin}${queryPath(dataSetId, state)}`;
  const get = getUrl(location.origin, dataSetId, state);
  const input = { origin: location.origin, dataSetId, postUrl, body, dataSetVersion: state.dataSetVersion };
  return h(
    'div',
    { class: 'app-code-panel' },
    h(
      'p',
      { class: 'govuk-body' },
      'Each returns the first 1,000 matching rows; ask for ',
      h('code', null, 'page'),
      ' 2, 3… for more, or send ',
      h('code', null, 'Accept: text/csv'),
      ' for every row.',
    ),
    get.url
      ? [codeBlock('GET URL', get.url, 'get-url'), codeBlock('curl (GET)', curlGet(get.url), 'curl-get')]
      : h('div', { class: 'govuk-inset-text' }, `There is no GET URL for this query: ${get.reason}`),
    codeBlock(`POST body (to ${postUrl})`, compactJson(body), 'post-body'),
    codeBlock('curl (POST)', curlPost(input), 'curl-post'),
    codeBlock('curl (every row as CSV)', curlCsv(input), 'curl-csv'),
    codeBlock('R (eesyapi)', rSnippet(input), 'r'),
    codeBlock('R (httr2 and jsonlite, no eesyapi)', rHttr2Snippet(input), 'r-httr2'),
    codeBlock('Python (requests)', pythonSnippet(input), 'python'),
  );
}
