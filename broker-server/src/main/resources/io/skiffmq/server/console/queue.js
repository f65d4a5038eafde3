// One queue's page: its details, publishing a message to it (through the default exchange), getting messages
// (requeued by default), purging and deleting it.

import { call, seg } from './api.js';
import { count, el, exchangeName, facts, rate } from './dom.js';

const ACKMODES = [
  ['ack_requeue_true', 'Nack message requeue true'],
  ['reject_requeue_true', 'Reject requeue true'],
  ['ack_requeue_false', 'Automatic ack'],
  ['reject_requeue_false', 'Reject requeue false'],
];

function labelled(label, input) {
  return el('label', {}, label, ' ', input);
}

function select(id, options, selected) {
  return el('select', { id }, options.map(([value, text]) => el('option', {
    value, selected: value === selected }, text)));
}

/** One message got: where it came from, its properties and its payload, all as text. */
function message(m, index) {
  const properties = Object.keys(m.properties || {}).length ? JSON.stringify(m.properties) : '';
  return el('div', { class: 'message' },
    el('h3', {}, `Message ${index + 1}`),
    facts([
      ['Exchange', exchangeName(m.exchange)],
      ['Routing key', m.routing_key],
      ['Redelivered', String(m.redelivered)],
      ['Properties', properties],
      ['Payload', `${m.payload_bytes} bytes, encoding: ${m.payload_encoding}`],
    ]),
    el('pre', { class: 'payload' }, m.payload));
}

export function queue(main, app, vhost, name) {
  const path = `/api/queues/${seg(vhost)}/${seg(name)}`;
  const details = el('div', { id: 'queue-details' });

  const routingKey = el('input', { id: 'publish-routing-key', value: name, size: 30 });
  const deliveryMode = select('publish-delivery-mode', [['1', '1 - Non-persistent'], ['2', '2 - Persistent']], '2');
  const contentType = el('input', { id: 'publish-content-type', placeholder: 'text/plain', size: 20 });
  const payload = el('textarea', { id: 'publish-payload', rows: 4, cols: 60 });
  const publishForm = el('form', { id: 'publish-form', onsubmit: (e) => { e.preventDefault(); publish(); } },
    el('p', { class: 'hint' }, 'Published to the default exchange, which routes by the queue\'s name.'),
    labelled('Routing key', routingKey), labelled('Delivery mode', deliveryMode),
    labelled('Content type', contentType), labelled('Payload', payload),
    el('button', { id: 'publish', type: 'submit' }, 'Publish message'));

  const getCount = el('input', { id: 'get-count', type: 'number', min: 1, value: 1, size: 4 });
  const ackmode = select('get-ackmode', ACKMODES, 'ack_requeue_true');
  const encoding = select('get-encoding', [['auto', 'Automatic string/base64'], ['base64', 'base64']], 'auto');
  const messages = el('div', { id: 'messages' });
  const getForm = el('form', { id: 'get-form', onsubmit: (e) => { e.preventDefault(); get(); } },
    labelled('Messages', getCount), labelled('Ack mode', ackmode), labelled('Encoding', encoding),
    el('button', { id: 'get', type: 'submit' }, 'Get messages'), messages);

  main.append(
    el('h1', {}, 'Queue ', el('span', { id: 'queue-name' }, name)),
    el('p', { class: 'hint' }, 'Virtual host ', el('span', { id: 'queue-vhost' }, vhost)),
    details,
    el('section', {}, el('h2', {}, 'Publish message'), publishForm),
    el('section', {}, el('h2', {}, 'Get messages'), getForm),
    el('section', {}, el('h2', {}, 'Purge and delete'),
      el('button', { id: 'purge', type: 'button', class: 'danger', onclick: purge }, 'Purge messages'), ' ',
      el('button', { id: 'delete', type: 'button', class: 'danger', onclick: remove }, 'Delete queue')));

  const page = {
    async refresh() {
      const q = await call('GET', path);
      const flags = [q.durable ? 'durable' : null, q.auto_delete ? 'auto-delete' : null,
        q.exclusive ? 'exclusive' : null].filter((f) => f).join(', ');
      details.replaceChildren(facts([
        ['Type', q.type], ['State', q.state, 'queue-state'], ['Features', flags],
        // where it lives: a quorum queue's leader and members, as RabbitMQ's queue page shows them
        ...(q.members ? [
          ['Leader', q.leader || '(none)', 'queue-leader'],
          ['Members', q.members.join(', '), 'queue-members'],
          ['Online', (q.online || []).join(', '), 'queue-online'],
        ] : [['Node', q.node || '', 'queue-node']]),
        ['Arguments', Object.keys(q.arguments || {}).length ? JSON.stringify(q.arguments) : ''],
        ['Policy', q.policy || '', 'queue-policy'],
        ['Operator policy', q.operator_policy || '', 'queue-operator-policy'],
        ['Effective policy definition', Object.keys(q.effective_policy_definition || {}).length
          ? JSON.stringify(q.effective_policy_definition) : '', 'queue-effective-policy'],
        ['Consumers', count(q.consumers)],
        ['Ready', count(q.messages_ready), 'queue-ready'],
        ['Unacked', count(q.messages_unacknowledged), 'queue-unacked'],
        ['Total', count(q.messages), 'queue-total'],
        ['Incoming', rate(q.message_stats, 'publish')],
        ['Deliver / get', rate(q.message_stats, 'deliver_get')],
        ['Ack', rate(q.message_stats, 'ack')],
        // a stream's log, as RabbitMQ's stream queue page shows it
        ...(q.type === 'stream' ? [
          ['First offset', count(q.first_offset), 'stream-first-offset'],
          ['Last offset', count(q.committed_offset), 'stream-last-offset'],
          ['Committed chunk', count(q.committed_chunk_id)],
          ['Segments', count(q.segments), 'stream-segments'],
        ] : []),
      ]));
    },
  };

  async function publish() {
    const properties = { delivery_mode: Number(deliveryMode.value) };
    if (contentType.value.trim()) {
      properties.content_type = contentType.value.trim();
    }
    await app.act(async () => {
      const answer = await call('POST', `/api/exchanges/${seg(vhost)}/amq.default/publish`, {
        properties, routing_key: routingKey.value, payload: payload.value, payload_encoding: 'string' });
      app.notice(answer && answer.routed ? 'Message published.' : 'Message published, but not routed.');
      await page.refresh();
    });
  }

  async function get() {
    await app.act(async () => {
      const got = await call('POST', `${path}/get`, {
        count: Number(getCount.value) || 1, ackmode: ackmode.value, encoding: encoding.value, truncate: 50000 });
      messages.replaceChildren(...(got.length ? got.map(message)
        : [el('p', { class: 'hint', id: 'queue-empty' }, 'Queue is empty')]));
      await page.refresh();
    });
  }

  async function purge() {
    const answer = await app.confirm(`Purge every ready message of the queue ${name}?`, 'Purge', false);
    if (answer.ok) {
      await app.act(async () => {
        await call('DELETE', `${path}/contents`);
        messages.replaceChildren();
        app.notice(`Queue ${name} purged.`);
        await page.refresh();
      });
    }
  }

  async function remove() {
    const answer = await app.confirm(`Delete the queue ${name} and its messages?`, 'Delete', false);
    if (answer.ok) {
      await app.act(async () => {
        await call('DELETE', path);
        app.go('#/queues', `Queue ${name} deleted.`);
      });
    }
  }
  return page;
}
