#!/usr/bin/env python3
"""AMQP 0-9-1 from Python with pika: what Amqp091PikaTest runs against the broker.

Usage: pika_roundtrip.py HOST PORT COUNT

On a confirm-select channel it declares a topic exchange and a queue with arguments, binds them, publishes COUNT
persistent messages with every basic property and a header table of many types (each publish waits for its
confirm), and one mandatory unroutable message (returned). It then consumes with basic_consume and manual acks,
nacking one message once with requeue, checks the queue is empty, tries basic.get on it, runs a rolled back and a
committed transaction on a second channel, deletes what it made, and prints one JSON line for the test to check.
Anything unexpected raises, and the exit status is not 0.
"""

import datetime
import decimal
import json
import sys
import uuid

import pika
from pika.exceptions import UnroutableError

NACKED = 'msg-3'


def jsonable(value):
    """Header values as JSON: the test checks the types pika decoded as well as the values."""
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [jsonable(v) for v in value]
    if isinstance(value, decimal.Decimal):
        return {'decimal': str(value)}
    if isinstance(value, datetime.datetime):
        return {'timestamp': value.isoformat()}
    if isinstance(value, bytes):
        return {'bytes': value.hex()}
    return value


def properties_of(properties):
    names = ['content_type', 'content_encoding', 'delivery_mode', 'priority', 'correlation_id', 'reply_to',
             'expiration', 'message_id', 'timestamp', 'type', 'user_id', 'app_id']
    return {name: getattr(properties, name) for name in names}


def main(host, port, count):
    suffix = uuid.uuid4().hex[:8]
    exchange = 'pika-topic-' + suffix
    queue = 'pika-queue-' + suffix
    parameters = pika.ConnectionParameters(
        host=host, port=port, virtual_host='/', credentials=pika.PlainCredentials('guest', 'guest'),
        client_properties={'connection_name': 'skiffmq-pika-test'}, connection_attempts=1, socket_timeout=10,
        blocked_connection_timeout=30)
    connection = pika.BlockingConnection(parameters)
    result = {}
    server = connection._impl.server_properties  # pika keeps connection.start's table here
    result['product'] = server.get('product')
    result['capabilities'] = sorted(name for name, on in connection._impl.server_capabilities.items() if on)

    channel = connection.channel()
    channel.confirm_delivery()  # pika refuses unless the server offers publisher_confirms and basic.nack
    channel.exchange_declare(exchange, exchange_type='topic', durable=False, auto_delete=False)
    declare_ok = channel.queue_declare(queue, durable=True,
                                       arguments={'x-message-ttl': 600000, 'x-max-length': 10000})
    result['declared_queue'] = declare_ok.method.queue
    channel.queue_bind(queue, exchange, routing_key='pika.#')

    for i in range(count):
        properties = pika.BasicProperties(
            content_type='application/json', content_encoding='utf-8', delivery_mode=2, priority=i % 10,
            correlation_id='corr-%d' % i, reply_to='pika-replies', expiration='600000', message_id='msg-%d' % i,
            timestamp=1700000000 + i, type='pika.test', user_id='guest', app_id='pika-roundtrip',
            headers={'index': i, 'name': 'pika', 'flag': i % 2 == 0, 'ratio': decimal.Decimal('1.5'),
                     'nested': {'a': 1, 'b': 'two'}, 'list': [1, 'two', False],
                     'when': datetime.datetime(2024, 1, 2, 3, 4, 5), 'big': 2 ** 40})
        # with confirms on, basic_publish returns once the broker acks (NackError on a nack)
        channel.basic_publish(exchange, 'pika.msg.%d' % i, json.dumps({'i': i}).encode(), properties,
                              mandatory=True)
    result['confirmed'] = count

    try:
        channel.basic_publish(exchange, 'nobody.listens', b'unroutable', mandatory=True)
        result['returned'] = 0
    except UnroutableError as e:
        result['returned'] = len(e.messages)
        result['return'] = {'code': e.messages[0].method.reply_code, 'text': e.messages[0].method.reply_text,
                            'exchange': e.messages[0].method.exchange,
                            'routing_key': e.messages[0].method.routing_key}

    result['ready_before'] = channel.queue_declare(queue, passive=True).method.message_count

    channel.basic_qos(prefetch_count=20)
    first_deliveries = []
    redelivered = []
    received = []

    def on_message(ch, method, properties, body):
        if method.redelivered:
            redelivered.append(properties.message_id)
        else:
            first_deliveries.append(properties.message_id)
        if properties.message_id == NACKED and not method.redelivered:
            ch.basic_nack(method.delivery_tag, requeue=True)
            return
        received.append((method, properties, body))
        ch.basic_ack(method.delivery_tag)
        if len(received) == count:
            ch.stop_consuming()

    channel.basic_consume(queue, on_message, auto_ack=False, arguments={'x-priority': 5})
    connection.call_later(30, channel.stop_consuming)
    channel.start_consuming()  # returns after stop_consuming, which cancels the consumer

    result['consumed'] = len(received)
    result['in_order'] = first_deliveries == ['msg-%d' % i for i in range(count)]
    result['redelivered'] = redelivered
    method, properties, body = received[0]
    result['first'] = {'exchange': method.exchange, 'routing_key': method.routing_key,
                       'redelivered': method.redelivered, 'body': body.decode(),
                       'properties': properties_of(properties), 'headers': jsonable(properties.headers)}
    after = channel.queue_declare(queue, passive=True).method
    result['ready_after'] = after.message_count
    result['consumers_after'] = after.consumer_count
    get_method, _, _ = channel.basic_get(queue, auto_ack=True)
    result['get_empty'] = get_method is None

    transactional = connection.channel()
    transactional.tx_select()
    transactional.basic_publish('', queue, b'rolled back')
    transactional.tx_rollback()
    transactional.basic_publish('', queue, b'committed')
    transactional.tx_commit()
    get_method, _, body = transactional.basic_get(queue, auto_ack=False)
    transactional.basic_ack(get_method.delivery_tag)
    transactional.tx_commit()
    result['tx_body'] = body.decode()
    result['tx_get_message_count'] = get_method.message_count

    result['deleted_messages'] = channel.queue_delete(queue).method.message_count
    channel.exchange_delete(exchange)
    connection.close()
    print(json.dumps(result, sort_keys=True))


if __name__ == '__main__':
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
