import { h, uid } from '../dom.js';

export interface ChecklistOption {
  value: string;
  label: string;
  /** Extra words the search matches (codes). */
  keywords?: string;
}

export interface ChecklistOptions {
  legend: string;
  hint?: string;
  options: ChecklistOption[];
  selected: Set<string>;
  onChange: () => void;
  /** Show a search box (long lists such as local authorities). */
  searchable?: boolean;
  /** Most checkboxes rendered at once; the search narrows the rest. */
  limit?: number;
  name?: string;
}

/** One option's checkbox: ticking or unticking it changes `selected`, then calls `changed`. */
function checkboxItem(inputId: string, opt: ChecklistOption, selected: Set<string>, changed: () => void): HTMLElement {
  return h(
    'div',
    { class: 'govuk-checkboxes__item' },
    h('input', {
      class: 'govuk-checkboxes__input',
      id: inputId,
      type: 'checkbox',
      value: opt.value,
      checked: selected.has(opt.value),
      'data-label': opt.label,
      onchange: (e: Event) => {
        const input = e.target as HTMLInputElement;
        if (input.checked) selected.add(opt.value);
        else selected.delete(opt.value);
        changed();
      },
    }),
    h('label', { class: 'govuk-label govuk-checkboxes__label', for: inputId }, opt.label),
  );
}

/** The search box of a searchable list: `onSearch` gets its text at every keystroke. */
function searchBox(searchId: string, legend: string, onSearch: (text: string) => void): HTMLElement {
  return h(
    'div',
    { class: 'govuk-form-group govuk-!-margin-bottom-2' },
    h('label', { class: 'govuk-label', for: searchId }, `Search ${legend.toLowerCase()}`),
    h('input', {
      class: 'govuk-input govuk-!-width-two-thirds',
      id: searchId,
      type: 'search',
      autocomplete: 'off',
      oninput: (e: Event) => onSearch((e.target as HTMLInputElement).value),
    }),
  );
}

/**
 * A GOV.UK checkbox list in a fieldset, with "Select all" / "Clear" and, for long lists, a search box that narrows
 * the boxes shown (what is selected is kept while searching).
 */
export function checklist(o: ChecklistOptions): HTMLElement {
  const id = uid(o.name ?? 'list');
  const limit = o.limit ?? 300;
  const box = h('div', {
    class: 'govuk-checkboxes govuk-checkboxes--small app-checklist__options',
    'data-module': 'govuk-checkboxes',
  });
  const status = h('p', { class: 'govuk-body-s app-checklist__status', 'aria-live': 'polite', id: `${id}-status` });
  let query = '';
  const matching = () => {
    const q = query.trim().toLowerCase();
    return q ? o.options.filter((opt) => `${opt.label} ${opt.keywords ?? ''}`.toLowerCase().includes(q)) : o.options;
  };
  const render = () => {
    const shown = matching();
    box.replaceChildren(
      ...shown.slice(0, limit).map((opt, i) =>
        checkboxItem(`${id}-${i}`, opt, o.selected, () => {
          updateStatus();
          o.onChange();
        }),
      ),
    );
    updateStatus();
  };
  const updateStatus = () => {
    const shown = matching();
    const more = shown.length > limit ? ` Showing the first ${limit} of ${shown.length}; search to narrow.` : '';
    status.textContent = `${o.selected.size} of ${o.options.length} selected.${query ? ` ${shown.length} match “${query}”.` : ''}${more}`;
  };
  const selectAll = () => {
    for (const opt of matching()) o.selected.add(opt.value);
    render();
    o.onChange();
  };
  const clear = () => {
    for (const opt of matching()) o.selected.delete(opt.value);
    render();
    o.onChange();
  };
  render();
  const searchId = `${id}-search`;
  return h(
    'div',
    { class: 'govuk-form-group app-checklist' },
    h(
      'fieldset',
      { class: 'govuk-fieldset', 'aria-describedby': `${o.hint ? `${id}-hint ` : ''}${id}-status` },
      h('legend', { class: 'govuk-fieldset__legend govuk-fieldset__legend--s' }, o.legend),
      o.hint ? h('div', { class: 'govuk-hint', id: `${id}-hint` }, o.hint) : null,
      o.searchable
        ? searchBox(searchId, o.legend, (text) => {
            query = text;
            render();
          })
        : null,
      h(
        'div',
        { class: 'govuk-button-group app-checklist__actions' },
        h(
          'button',
          { type: 'button', class: 'govuk-button govuk-button--secondary app-button--small', onclick: selectAll },
          'Select all',
          h('span', { class: 'govuk-visually-hidden' }, ` ${o.legend.toLowerCase()}${o.searchable ? ' shown' : ''}`),
        ),
        h(
          'button',
          { type: 'button', class: 'govuk-button govuk-button--secondary app-button--small', onclick: clear },
          'Clear',
          h('span', { class: 'govuk-visually-hidden' }, ` ${o.legend.toLowerCase()}`),
        ),
      ),
      status,
      box,
    ),
  );
}
