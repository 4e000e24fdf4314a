/**
 * The explorer's query view: the builder (./query-builder.ts: live count and four steps), the results
 * (./query-results.ts: cross-tab; ./query-chart.ts: chart; ./query-code.ts: downloads and code), sharing one
 * QueryView (./query-view.ts). Everything pure they use lives in its own tested module (../query.ts, ../steps.ts,
 * ../layout.ts, ../crosstab.ts, ../chart.ts, ../snippets.ts, ../format.ts).
 */
import { apiGet, type DataSet, type DataSetVersion, type Meta } from '../api.js';
import { h, replace } from '../dom.js';
import { locationLabels } from '../locations.js';
import { parseState, stateToSearch, type QueryState } from '../query.js';
import { allVersions } from './dataset.js';
import { builderSteps, liveCount } from './query-builder.js';
import { showResults, type ResultsCount } from './query-results.js';
import type { QueryView } from './query-view.js';

export { chartTotals, shownIndicators, warningText } from './query-view.js';

/** The query page's view: every choice goes into the URL at once (replaceState), so a reload or a shared link keeps it. */
function queryView(dataSetId: string, dataSet: DataSet, meta: Meta, state: QueryState): QueryView {
  const view: QueryView = {
    dataSetId,
    dataSet,
    meta,
    state,
    names: locationLabels(meta),
    writeUrl(push = false) {
      const url = `${location.pathname}?${stateToSearch(state)}`;
      if (push) history.pushState(null, '', url);
      else history.replaceState(null, '', url);
      if (view.permalinkInput) view.permalinkInput.value = `${location.origin}${url}`;
    },
  };
  return view;
}

/** The version queried (`version`), chosen from the published and deprecated ones; changing it reloads the page. */
function versionPicker(dataSet: DataSet, versions: DataSetVersion[], version: string): HTMLElement {
  const versionSelect = h(
    'select',
    { class: 'govuk-select', id: 'version', name: 'dataSetVersion' },
    versions
      .filter((v) => v.status === 'Published' || v.status === 'Deprecated')
      .map((v) =>
        h(
          'option',
          { value: v.version, selected: v.version === version },
          `${v.version}${v.version === dataSet.latestVersion?.version ? ' (latest)' : ''} – ${v.status}`,
        ),
      ),
  );
  return h(
    'div',
    { class: 'govuk-form-group' },
    h('label', { class: 'govuk-label govuk-label--s', for: 'version' }, 'Version'),
    h(
      'div',
      { class: 'app-version-row' },
      versionSelect,
      h(
        'button',
        {
          type: 'button',
          class: 'govuk-button govuk-button--secondary app-button--small',
          onclick: () => {
            location.assign(`/data-sets/${dataSet.id}/query?dataSetVersion=${encodeURIComponent(versionSelect.value)}`);
          },
        },
        'Change version',
      ),
    ),
  );
}

/** `/data-sets/{id}/query?…`: the query builder, the live count, and the results (table, chart, download, code). */
export async function queryPage(main: HTMLElement, dataSetId: string, params: URLSearchParams): Promise<void> {
  const state = parseState(params);
  const id = encodeURIComponent(dataSetId);
  const versionParam = state.dataSetVersion ? `?dataSetVersion=${encodeURIComponent(state.dataSetVersion)}` : '';
  const [dataSet, meta, versions] = await Promise.all([
    apiGet<DataSet>(`/v1/data-sets/${id}`),
    apiGet<Meta>(`/v1/data-sets/${id}/meta${versionParam}`),
    allVersions(dataSetId),
  ]);
  const version = state.dataSetVersion ?? dataSet.latestVersion?.version ?? '';
  document.title = `Query: ${dataSet.title} – Explore education statistics data`;

  const view = queryView(dataSetId, dataSet, meta, state);
  const count = liveCount(view);
  const stale = h(
    'p',
    { class: 'govuk-body-s app-stale', hidden: true, 'data-stale': '' },
    'Your choices have changed: show the results again to update the table and chart.',
  );
  let resultsShown = false;
  const steps = builderSteps(view, () => {
    // Only once there are results can they be out of date.
    if (resultsShown) stale.hidden = false;
    steps.refreshSummaries();
    view.writeUrl();
    count.update();
  });
  const results = h('div', { id: 'results' });
  const resultsCount: ResultsCount = {
    update: () => count.update(),
    show: (response) => count.show(response),
    resultsShown: () => {
      resultsShown = true;
      stale.hidden = true;
    },
  };

  const form = h(
    'form',
    {
      class: 'app-builder',
      novalidate: true,
      onsubmit: (e: Event) => {
        e.preventDefault();
        state.page = 1;
        steps.openStep(undefined);
        view.writeUrl(true);
        void showResults(view, results, resultsCount);
      },
    },
    versionPicker(dataSet, versions, version),
    steps.sections,
    h(
      'div',
      { class: 'app-sticky-count' },
      count.box,
      stale,
      h(
        'button',
        { type: 'submit', class: 'govuk-button govuk-!-margin-bottom-0', 'data-module': 'govuk-button' },
        'Show results',
      ),
    ),
  );

  replace(
    main,
    h('a', { href: `/data-sets/${dataSet.id}`, class: 'govuk-back-link' }, 'Back to the data set'),
    h('span', { class: 'govuk-caption-l' }, `${dataSet.title}, version ${version}`),
    h('h1', { class: 'govuk-heading-xl' }, 'Build a query'),
    form,
    results,
  );
  steps.refreshSummaries();
  // A link with choices and no open step shows its results; otherwise the builder opens at its step (or the first).
  const hasChoices = [...params.keys()].some((k) => k !== 'dataSetVersion' && k !== 'step');
  steps.openStep(state.step ?? (hasChoices ? undefined : 1));
  // A link that shows its results takes the count from them: one query fewer while the page loads.
  if (state.step !== undefined) count.update();
  if (state.step === undefined) await showResults(view, results, resultsCount, false, true);

  window.addEventListener('popstate', () => location.reload(), { once: true });
}
