// Building the DOM from data without ever parsing it as HTML: every value shown becomes a text node or an
// attribute value, so a queue named "<script>" shows as those characters.

/**
 * An element: attrs are attributes (values as strings; true for an empty one; null, undefined or false for none),
 * "on..." listeners and "dataset"; children are nodes or values shown as text.
 */
export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) {
      continue;
    }
    if (key.startsWith('on') && typeof value === 'function') {
      e.addEventListener(key.slice(2), value);
    } else if (key === 'dataset') {
      Object.assign(e.dataset, value);
    } else {
      e.setAttribute(key, value === true ? '' : String(value));
    }
  }
  for (const child of children.flat(Infinity)) {
    if (child !== null && child !== undefined) {
      e.append(child instanceof Node ? child : String(child));
    }
  }
  return e;
}

/** A table: columns [{title, numeric}], rows of cells (nodes or values); the tbody is replaced on each call. */
export function table(id, columns, rows, empty) {
  const head = el('thead', {}, el('tr', {}, columns.map((c) => el('th', { class: c.numeric ? 'num' : null },
    c.title))));
  const t = el('table', { id }, head, body(columns, rows, empty));
  return t;
}

export function body(columns, rows, empty) {
  if (rows.length === 0) {
    return el('tbody', {}, el('tr', { class: 'empty' }, el('td', { colspan: columns.length }, empty)));
  }
  return el('tbody', {}, rows);
}

/** A row whose cells line up with columns (numeric ones right-aligned). */
export function row(columns, cells, attrs = {}) {
  return el('tr', attrs, cells.map((cell, i) => el('td', { class: columns[i] && columns[i].numeric ? 'num' : null },
    cell)));
}

export function count(value) {
  return value === undefined || value === null ? '' : Number(value).toLocaleString('en');
}

export function rate(stats, field) {
  const details = stats && stats[`${field}_details`];
  return details ? `${Number(details.rate).toFixed(1)}/s` : '';
}

/** A virtual host or exchange name as shown. */
export function exchangeName(name) {
  return name === '' ? '(AMQP default)' : name;
}

/** A definition list of [label, value, id] entries. */
export function facts(entries) {
  return el('dl', { class: 'facts' }, entries.map(([label, value, id]) => [el('dt', {}, label),
    el('dd', { id }, value)]));
}
