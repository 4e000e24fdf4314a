import { ApiError } from './api.js';
import { h, replace } from './dom.js';
import { dataSetPage } from './pages/dataset.js';
import { findPage, publicationPage } from './pages/find.js';
import { errorSummary } from './pages/error.js';

/** Every page is a real URL (deep links work, the back button works); the client renders the one it is on. */
async function route(main: HTMLElement): Promise<void> {
  const path = location.pathname.replace(/\/+$/, '') || '/';
  const params = new URLSearchParams(location.search);
  let match: RegExpExecArray | null;
  if (path === '/') return findPage(main, params);
  if ((match = /^\/publications\/([^/]+)$/.exec(path))) return publicationPage(main, decodeURIComponent(match[1]!));
  if ((match = /^\/data-sets\/([^/]+)$/.exec(path))) return dataSetPage(main, decodeURIComponent(match[1]!));
  if ((match = /^\/data-sets\/([^/]+)\/query$/.exec(path))) {
    // The query builder, table and chart are most of the client: only this page loads them.
    const { queryPage } = await import('./pages/query.js');
    return queryPage(main, decodeURIComponent(match[1]!), params);
  }
  throw new ApiError(404, 'There is no page at this address.', undefined);
}

async function start(): Promise<void> {
  const main = document.getElementById('main-content') as HTMLElement;
  document.body.classList.add('js-enabled', 'govuk-frontend-supported');
  main.setAttribute('aria-busy', 'true');
  try {
    await route(main);
  } catch (error) {
    document.title = 'Error – Explore education statistics data';
    const notFound = error instanceof ApiError && error.status === 404;
    replace(
      main,
      h('h1', { class: 'govuk-heading-xl' }, notFound ? 'Page not found' : 'Sorry, there is a problem'),
      errorSummary(error),
      h('p', { class: 'govuk-body' }, h('a', { class: 'govuk-link', href: '/' }, 'Find data')),
    );
  } finally {
    main.removeAttribute('aria-busy');
    // When the page showed its content, in ms since navigation start (read by bench/explorer.ts).
    main.dataset.readyMs = String(Math.round(performance.now()));
    main.dataset.ready = 'true';
  }
}

void start();
