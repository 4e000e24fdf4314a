import { apiGet, type DataSet, type Paging, type Publication } from '../api.js';
import { h, replace, uid } from '../dom.js';
import { formatDate, plural } from '../format.js';

export function statusTag(status: string): HTMLElement {
  const colour: Record<string, string> = {
    Published: 'govuk-tag--green',
    Deprecated: 'govuk-tag--yellow',
    Withdrawn: 'govuk-tag--red',
    Draft: 'govuk-tag--grey',
  };
  return h('strong', { class: `govuk-tag ${colour[status] ?? ''}` }, status);
}

/** The data sets of a publication as a table: title (link), latest version, status, published. */
export function dataSetsTable(dataSets: DataSet[], caption: string): HTMLElement {
  if (dataSets.length === 0) return h('p', { class: 'govuk-body' }, 'This publication has no data sets yet.');
  return h(
    'table',
    { class: 'govuk-table app-table--stack' },
    h('caption', { class: 'govuk-table__caption govuk-table__caption--s govuk-visually-hidden' }, caption),
    h(
      'thead',
      { class: 'govuk-table__head' },
      h(
        'tr',
        { class: 'govuk-table__row' },
        ['Data set', 'Latest version', 'Status', 'Published'].map((t) =>
          h('th', { scope: 'col', class: 'govuk-table__header' }, t),
        ),
      ),
    ),
    h(
      'tbody',
      { class: 'govuk-table__body' },
      dataSets.map((d) =>
        h(
          'tr',
          { class: 'govuk-table__row' },
          h(
            'td',
            { class: 'govuk-table__cell', 'data-label': 'Data set' },
            h('a', { class: 'govuk-link', href: `/data-sets/${d.id}` }, d.title),
            h('span', { class: 'govuk-hint govuk-!-font-size-16 govuk-!-margin-bottom-0 app-block' }, d.summary),
          ),
          h('td', { class: 'govuk-table__cell', 'data-label': 'Latest version' }, d.latestVersion?.version ?? 'None'),
          h('td', { class: 'govuk-table__cell', 'data-label': 'Status' }, statusTag(d.status)),
          h('td', { class: 'govuk-table__cell', 'data-label': 'Published' }, formatDate(d.latestVersion?.published)),
        ),
      ),
    ),
  );
}

/** All data sets of a publication (the API pages them by 20). */
export async function publicationDataSets(publicationId: string): Promise<DataSet[]> {
  const out: DataSet[] = [];
  for (let page = 1; ; page++) {
    const list = await apiGet<{ paging: Paging; results: DataSet[] }>(
      `/v1/publications/${encodeURIComponent(publicationId)}/data-sets?page=${page}&pageSize=20`,
    );
    out.push(...list.results);
    if (page >= list.paging.totalPages) return out;
  }
}

function pagination(paging: Paging, hrefOf: (page: number) => string): HTMLElement | null {
  if (paging.totalPages <= 1) return null;
  const items: HTMLElement[] = [];
  for (let p = 1; p <= paging.totalPages; p++) {
    items.push(
      h(
        'li',
        { class: `govuk-pagination__item${p === paging.page ? ' govuk-pagination__item--current' : ''}` },
        h(
          'a',
          {
            class: 'govuk-link govuk-pagination__link',
            href: hrefOf(p),
            'aria-label': `Page ${p}`,
            'aria-current': p === paging.page ? 'page' : null,
          },
          String(p),
        ),
      ),
    );
  }
  return h(
    'nav',
    { class: 'govuk-pagination', 'aria-label': 'Results pages' },
    h('ul', { class: 'govuk-pagination__list' }, items),
  );
}

/** `/` and `/?search=…`: search publications and list each one's data sets. */
export async function findPage(main: HTMLElement, params: URLSearchParams): Promise<void> {
  const search = (params.get('search') ?? '').trim();
  const page = Math.max(1, Number(params.get('page')) || 1);
  document.title = search
    ? `“${search}” – Explore education statistics data`
    : 'Find statistics – Explore education statistics data';
  const inputId = uid('search');
  const query = new URLSearchParams();
  if (search) query.set('search', search);
  query.set('page', String(page));
  query.set('pageSize', '10');
  const list = await apiGet<{ paging: Paging; results: Publication[] }>(`/v1/publications?${query}`);
  const sections = await Promise.all(
    list.results.map(async (p) => ({ publication: p, dataSets: await publicationDataSets(p.id) })),
  );
  replace(
    main,
    h('h1', { class: 'govuk-heading-xl' }, 'Find education statistics data'),
    h(
      'p',
      { class: 'govuk-body-l' },
      'Search the publications, open a data set, build a query, see it as a table and a chart, and take it to your own code.',
    ),
    h(
      'form',
      { method: 'get', action: '/', role: 'search', class: 'app-search' },
      h(
        'div',
        { class: 'govuk-form-group' },
        h('label', { class: 'govuk-label govuk-label--m', for: inputId }, 'Search publications'),
        h('div', { class: 'govuk-hint', id: `${inputId}-hint` }, 'For example “pupil”, “absence” or “apprenticeships”'),
        h(
          'div',
          { class: 'app-search__row' },
          h('input', {
            class: 'govuk-input app-search__input',
            id: inputId,
            name: 'search',
            type: 'search',
            value: search,
            'aria-describedby': `${inputId}-hint`,
          }),
          h(
            'button',
            { class: 'govuk-button app-search__button', type: 'submit', 'data-module': 'govuk-button' },
            'Search',
          ),
        ),
      ),
    ),
    h(
      'h2',
      { class: 'govuk-heading-l', id: 'results-heading', 'aria-live': 'polite' },
      search
        ? `${plural(list.paging.totalResults, 'publication')} matching “${search}”`
        : `All ${plural(list.paging.totalResults, 'publication')}`,
    ),
    list.results.length === 0
      ? h(
          'p',
          { class: 'govuk-body' },
          'No publication matches. Try another word, or ',
          h('a', { class: 'govuk-link', href: '/' }, 'see all publications'),
          '.',
        )
      : h(
          'ul',
          { class: 'govuk-list app-results', 'aria-labelledby': 'results-heading' },
          sections.map(({ publication, dataSets }) =>
            h(
              'li',
              { class: 'app-result' },
              h(
                'h3',
                { class: 'govuk-heading-m govuk-!-margin-bottom-1' },
                h('a', { class: 'govuk-link', href: `/publications/${publication.id}` }, publication.title),
              ),
              h('p', { class: 'govuk-body govuk-!-margin-bottom-1' }, publication.summary),
              h(
                'p',
                { class: 'govuk-body-s app-secondary' },
                `Last published ${formatDate(publication.lastPublished)} · ${plural(dataSets.length, 'data set')}`,
              ),
              dataSetsTable(dataSets, `Data sets of ${publication.title}`),
            ),
          ),
        ),
    pagination(list.paging, (p) => `/?${new URLSearchParams({ ...(search ? { search } : {}), page: String(p) })}`),
  );
}

/** `/publications/{id}`: one publication and its data sets. */
export async function publicationPage(main: HTMLElement, publicationId: string): Promise<void> {
  const [publication, dataSets] = await Promise.all([
    apiGet<Publication>(`/v1/publications/${encodeURIComponent(publicationId)}`),
    publicationDataSets(publicationId),
  ]);
  document.title = `${publication.title} – Explore education statistics data`;
  replace(
    main,
    h('a', { href: '/', class: 'govuk-back-link' }, 'All publications'),
    h('span', { class: 'govuk-caption-l' }, 'Publication'),
    h('h1', { class: 'govuk-heading-xl' }, publication.title),
    h('p', { class: 'govuk-body-l' }, publication.summary),
    h('p', { class: 'govuk-body' }, `Last published ${formatDate(publication.lastPublished)}.`),
    h('h2', { class: 'govuk-heading-l' }, 'Data sets'),
    dataSetsTable(dataSets, `Data sets of ${publication.title}`),
  );
}
