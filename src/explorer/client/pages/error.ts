import { h } from '../dom.js';

/** An error in words, as a GOV.UK error summary. */
export function errorSummary(error: unknown): HTMLElement {
  const message = error instanceof Error ? error.message : String(error);
  return h(
    'div',
    { class: 'govuk-error-summary', role: 'alert', tabindex: '-1' },
    h('h2', { class: 'govuk-error-summary__title' }, 'There is a problem'),
    h('div', { class: 'govuk-error-summary__body' }, h('p', { class: 'govuk-body' }, message)),
  );
}
