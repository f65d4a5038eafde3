// The list pages and the overview. Each page builds its skeleton once and returns refresh(), which the console
// calls at once and then every few seconds; refresh fetches from the API and replaces what it shows.

import { ApiError, call, seg } from './api.js';
import { LineChart } from './charts.js';
import { body, count, el, exchangeName, facts, rate, row, table } from './dom.js';

const CHART_SPAN_MILLIS = 5 * 60 * 1000;

const NODE_COLUMNS = [
  { title: 'Name' }, { title: 'Type' }, { title: 'State' }, { title: 'Memory used', numeric: true },
  { title: 'Disk free', numeric: true }, { title: 'Uptime', numeric: true },
];

/** Bytes as RabbitMQ's overview shows them (KiB, MiB, GiB); empty when the node gave none (one that is down). */
function bytes(value) {
  if (value === undefined || value === null) {
    return '';
  }
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = Number(value);
  let unit = 0;
  while (v >= 1024 && unit < units.length - 1) {
    v /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${v} B` : `${v.toFixed(1)} ${units[unit]}`;
}

/** Milliseconds as days, hours and minutes. */
function uptime(millis) {
  if (millis === undefined || millis === null) {
    return '';
  }
  const minutes = Math.floor(millis / 60000);
  const d = Math.floor(minutes / 1440);
  const h = Math.floor((minutes % 1440) / 60);
  const m = minutes % 60;
  return d > 0 ? `${d}d ${h}h` : h > 0 ? `${h}h ${m}m` : `${m}m`;
}

export function overview(main) {
  const rates = el('canvas', { id: 'chart-rates', class: 'chart', width: 600, height: 200 });
  const queued = el('canvas', { id: 'chart-queued', class: 'chart', width: 600, height: 200 });
  const rateSeries = [
    { key: 'publish', label: 'Publish', color: '#c47b00', id: 'rate-publish' },
    { key: 'deliver_get', label: 'Deliver / get', color: '#2a7ab0', id: 'rate-deliver-get' },
    { key: 'ack', label: 'Consumer ack', color: '#3a9a3a', id: 'rate-ack' },
  ];
  const queuedSeries = [
    { key: 'messages_ready', label: 'Ready', color: '#c9a100', id: 'queued-ready' },
    { key: 'messages_unacknowledged', label: 'Unacked', color: '#2a7ab0', id: 'queued-unacked' },
    { key: 'messages', label: 'Total', color: '#8a5cc4', id: 'queued-total' },
  ];
  const rateChart = new LineChart(rates, rateSeries, CHART_SPAN_MILLIS);
  const queuedChart = new LineChart(queued, queuedSeries, CHART_SPAN_MILLIS);
  const legend = (series, unit) => el('ul', { class: 'legend' }, series.map((s) => el('li', {},
    el('span', { class: `swatch swatch-${s.key}` }), `${s.label} `, el('span', { id: s.id, class: 'value' }, ''),
    unit)));
  const noRates = el('p', { id: 'no-rates', class: 'hint', hidden: true },
    'Message rates are shown to users tagged monitoring or administrator.');
  const totals = el('div', { id: 'totals' });
  const versions = el('p', { id: 'versions', class: 'hint' });
  const nodeTable = table('nodes', NODE_COLUMNS, [], 'Loading…');
  // /api/nodes is for monitoring users, as in RabbitMQ: the section stays hidden for the others
  const nodes = el('section', { id: 'nodes-section', hidden: true }, el('h2', {}, 'Nodes'), nodeTable);
  main.append(
    el('h1', {}, 'Overview'),
    versions,
    el('section', {}, el('h2', {}, 'Queued messages'), queued, legend(queuedSeries, '')),
    el('section', {}, el('h2', {}, 'Message rates'), rates, legend(rateSeries, '/s'), noRates),
    el('section', {}, el('h2', {}, 'Totals'), totals),
    nodes);

  async function refreshNodes() {
    let list;
    try {
      list = await call('GET', '/api/nodes');
    } catch (e) {
      if (e instanceof ApiError && (e.status === 401 || e.status === 403)) {
        nodes.hidden = true;
        return;
      }
      throw e;
    }
    const rows = list.map((n) => row(NODE_COLUMNS, [
      n.name, n.type, n.running ? 'running' : 'down', bytes(n.mem_used), bytes(n.disk_free), uptime(n.uptime),
    ], { dataset: { name: n.name, running: String(Boolean(n.running)) } }));
    nodeTable.tBodies[0].replaceWith(body(NODE_COLUMNS, rows, 'No nodes'));
    nodes.hidden = false;
  }

  return {
    async refresh() {
      const [o] = await Promise.all([call('GET', '/api/overview'), refreshNodes()]);
      const now = Date.now();
      versions.textContent = `${o.product_name} ${o.product_version} (RabbitMQ ${o.rabbitmq_version} API) `
        + `on node ${o.node}`;
      const q = o.queue_totals || {};
      queuedChart.push(now, q);
      for (const s of queuedSeries) {
        document.getElementById(s.id).textContent = count(q[s.key] || 0);
      }
      const stats = o.message_stats;
      noRates.hidden = Boolean(stats);
      if (stats) {
        const values = {};
        for (const s of rateSeries) {
          values[s.key] = stats[`${s.key}_details`] ? stats[`${s.key}_details`].rate : 0;
          document.getElementById(s.id).textContent = values[s.key].toFixed(1);
        }
        rateChart.push(now, values);
      }
      const t = o.object_totals || {};
      totals.replaceChildren(facts([
        ['Connections', count(t.connections), 'total-connections'],
        ['Exchanges', count(t.exchanges), 'total-exchanges'],
        ['Queues', count(t.queues), 'total-queues'],
        ['Consumers', count(t.consumers), 'total-consumers'],
      ]));
    },
  };
}

const QUEUE_COLUMNS = [
  { title: 'Virtual host' }, { title: 'Name' }, { title: 'Type' }, { title: 'State' },
  { title: 'Ready', numeric: true }, { title: 'Unacked', numeric: true }, { title: 'Total', numeric: true },
  { title: 'Incoming', numeric: true }, { title: 'Deliver / get', numeric: true }, { title: 'Ack', numeric: true },
];

export function queues(main) {
  const queueTable = table('queues', QUEUE_COLUMNS, [], 'Loading…');
  main.append(el('h1', {}, 'Queues'), queueTable);
  return {
    async refresh() {
      const list = await call('GET', '/api/queues');
      const rows = list.map((q) => row(QUEUE_COLUMNS, [
        q.vhost,
        el('a', { href: `#/queues/${seg(q.vhost)}/${seg(q.name)}` }, q.name),
        q.type, q.state,
        count(q.messages_ready), count(q.messages_unacknowledged), count(q.messages),
        rate(q.message_stats, 'publish'), rate(q.message_stats, 'deliver_get'), rate(q.message_stats, 'ack'),
      ], { dataset: { vhost: q.vhost, name: q.name } }));
      queueTable.tBodies[0].replaceWith(body(QUEUE_COLUMNS, rows, 'No queues'));
    },
  };
}

const EXCHANGE_COLUMNS = [
  { title: 'Virtual host' }, { title: 'Name' }, { title: 'Type' }, { title: 'Features' },
];

function features(e) {
  return [e.durable ? 'durable' : null, e.auto_delete ? 'auto-delete' : null, e.internal ? 'internal' : null]
    .filter((f) => f).join(', ');
}

export function exchanges(main) {
  const exchangeTable = table('exchanges', EXCHANGE_COLUMNS, [], 'Loading…');
  main.append(el('h1', {}, 'Exchanges'), exchangeTable);
  return {
    async refresh() {
      const list = await call('GET', '/api/exchanges');
      const rows = list.map((e) => row(EXCHANGE_COLUMNS, [e.vhost, exchangeName(e.name), e.type, features(e)],
        { dataset: { vhost: e.vhost, name: e.name } }));
      exchangeTable.tBodies[0].replaceWith(body(EXCHANGE_COLUMNS, rows, 'No exchanges'));
    },
  };
}

const CONNECTION_COLUMNS = [
  { title: 'Name' }, { title: 'Virtual host' }, { title: 'User' }, { title: 'Protocol' }, { title: 'State' },
  { title: 'From client', numeric: true }, { title: 'To client', numeric: true }, { title: '' },
];

/** Bytes per second as RabbitMQ shows them. */
function byteRate(c, field) {
  const details = c[`${field}_details`];
  if (!details) {
    return '';
  }
  const r = details.rate;
  return r >= 1024 * 1024 ? `${(r / 1024 / 1024).toFixed(1)} MiB/s` : r >= 1024 ? `${(r / 1024).toFixed(1)} KiB/s`
    : `${r.toFixed(0)} B/s`;
}

/** Header values must be printable ASCII (fetch refuses others). */
const PRINTABLE = /^[\x20-\x7e]*$/;

const STREAM_CONNECTION_COLUMNS = [
  { title: 'Name' }, { title: 'Virtual host' }, { title: 'User' }, { title: 'State' },
  { title: 'Subscriptions', numeric: true }, { title: 'Publishers', numeric: true },
];

export function connections(main, app) {
  const connectionTable = table('connections', CONNECTION_COLUMNS, [], 'Loading…');
  const streamTable = table('stream-connections', STREAM_CONNECTION_COLUMNS, [], 'Loading…');
  main.append(el('h1', {}, 'Connections'), connectionTable, el('h2', {}, 'Stream connections'), streamTable);
  const page = {
    async refresh() {
      await Promise.all([page.refreshAll(), page.refreshStreams()]);
    },
    // RabbitMQ's stream management plugin's tab: the stream protocol's connections and their publishers
    async refreshStreams() {
      const [list, publishers] = await Promise.all([call('GET', '/api/stream/connections'),
        call('GET', '/api/stream/publishers')]);
      const rows = list.map((c) => row(STREAM_CONNECTION_COLUMNS, [
        c.name, c.vhost, c.user, c.connection_state, count(c.subscriptions),
        count(publishers.filter((p) => p.connection_details.name === c.name).length),
      ], { dataset: { name: c.name } }));
      streamTable.tBodies[0].replaceWith(body(STREAM_CONNECTION_COLUMNS, rows, 'No stream connections'));
    },
    async refreshAll() {
      const list = await call('GET', '/api/connections');
      const rows = list.map((c) => row(CONNECTION_COLUMNS, [
        c.name, c.vhost, c.user, c.protocol, c.state, byteRate(c, 'recv_oct'), byteRate(c, 'send_oct'),
        el('button', { type: 'button', class: 'close-connection danger', onclick: () => close(c.name) }, 'Close'),
      ], { dataset: { name: c.name } }));
      connectionTable.tBodies[0].replaceWith(body(CONNECTION_COLUMNS, rows, 'No connections'));
    },
  };

  async function close(name) {
    const answer = await app.confirm(`Close the connection ${name}?`, 'Close connection', true);
    if (!answer.ok) {
      return;
    }
    if (!PRINTABLE.test(answer.reason)) {
      app.failed(new Error('The reason must be printable ASCII.'));
      return;
    }
    const headers = answer.reason.trim() ? { 'X-Reason': answer.reason.trim() } : {};
    await app.act(async () => {
      await call('DELETE', `/api/connections/${seg(name)}`, undefined, headers);
      app.notice(`Connection ${name} closed.`);
      await page.refresh();
    });
  }
  return page;
}
