// Sends COUNT messages to QUEUE with rhea, receives them back on another link, and prints a JSON summary.
// Usage: node send-receive.js PORT QUEUE COUNT
const rhea = require('rhea');
const [port, queue, count] = [Number(process.argv[2]), process.argv[3], Number(process.argv[4])];
const container = rhea.create_container({ id: 'rhea-test' });
const received = [];
let sent = 0;
let accepted = 0;
let released = 0;
const timer = setTimeout(() => finish('timeout'), 20000);

function finish(error) {
  clearTimeout(timer);
  console.log(JSON.stringify({ error, accepted, released, received }));
  process.exit(error ? 1 : 0);
}

container.on('connection_open', (context) => {
  context.connection.open_sender({ target: { address: queue } });
});
container.on('sendable', (context) => {
  while (context.sender.sendable() && sent < count) {
    sent++;
    context.sender.send({ body: 'rhea-' + sent, application_properties: { n: sent } });
  }
});
container.on('accepted', () => {
  if (++accepted === count) {
    container.connection.open_receiver({ source: { address: queue }, credit_window: 10 });
  }
});
container.on('released', () => released++);
container.on('message', (context) => {
  received.push({ body: context.message.body, n: context.message.application_properties.n,
    exchange: context.message.message_annotations && context.message.message_annotations['x-exchange'] });
  if (received.length === count) {
    context.connection.close();
  }
});
container.on('connection_close', () => finish(received.length === count ? null : 'closed early'));
container.on('error', (e) => finish(String(e)));
container.connection = container.connect({ port, host: '127.0.0.1', username: 'guest', password: 'guest' });
