package io.skiffmq.server.amqp091;

import io.skiffmq.codec.amqp091.ExchangeMethod;
import io.skiffmq.codec.amqp091.Method;
import io.skiffmq.codec.amqp091.QueueMethod;
import io.skiffmq.codec.amqp091.ReplyCode;
import io.skiffmq.core.BrokerException;
import io.skiffmq.core.Exchange;
import io.skiffmq.core.MetadataTimeouts;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.definitions.DefinitionChange.QueueHomed;
import io.skiffmq.core.message.HeaderValues;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.queue.QueueDeclaration;
import io.skiffmq.core.queue.QueueType;
import io.skiffmq.core.routing.Binding;
import io.skiffmq.core.routing.Destination;
import io.skiffmq.server.authz.Access;
import io.skiffmq.server.authz.Permission;
import io.skiffmq.server.peer.PeerLinks;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * A channel's {@code exchange.*} and {@code queue.*} methods on the virtual host, with RabbitMQ's checks and reply
 * texts. Changes that may wait for the disk (durable declarations, deletions, bindings) run off the event loop
 * ({@link Amqp091Channel#await}); the connection reads no further frame until they are answered, so the methods
 * after them see their effect.
 *
 * <p>Owned by the connection's event loop.
 */
final class TopologyMethods {
    private static final String RESERVED = "amq.";
    private static final String ALTERNATE_EXCHANGE = "alternate-exchange";

    private final Amqp091Channel channel;
    private final VirtualHost vhost;

    TopologyMethods(Amqp091Channel channel, VirtualHost vhost) {
        this.channel = channel;
        this.vhost = vhost;
    }

    void onMethod(Method method) {
        if (method instanceof QueueMethod.Declare declare) {
            queueDeclare(declare);
        } else if (method instanceof QueueMethod.Bind bind) {
            queueBind(bind);
        } else if (method instanceof QueueMethod.Unbind unbind) {
            String queue = stripCrLf(queueName(unbind.queue(), unbind));
            String exchange = stripCrLf(unbind.exchange());
            String key = bindingKey(unbind.queue(), unbind.routingKey(), queue);
            ChannelPermits.queue(access(), Permission.WRITE, queue, unbind);
            ChannelPermits.exchange(access(), Permission.READ, exchange, unbind);
            ChannelPermits.topic(access(), vhost, Permission.READ, exchange, key, unbind);
            unbind(new Binding(exchange, Destination.queue(queue), key, unbind.arguments()), unbind, false,
                QueueMethod.UnbindOk.INSTANCE);
        } else if (method instanceof QueueMethod.Purge purge) {
            String purged = queueName(purge.queue(), purge);
            ChannelPermits.queue(access(), Permission.READ, purged, purge);
            Queue queue = existingQueue(purged, purge);
            channel.await(queue.purge(), purge, count -> {
                if (!purge.noWait()) {
                    channel.reply(new QueueMethod.PurgeOk(count));
                }
            });
        } else if (method instanceof QueueMethod.Delete delete) {
            queueDelete(delete);
        } else if (method instanceof ExchangeMethod.Declare declare) {
            exchangeDeclare(declare);
        } else if (method instanceof ExchangeMethod.Delete delete) {
            exchangeDelete(delete);
        } else if (method instanceof ExchangeMethod.Bind bind) {
            String source = stripCrLf(bind.source());
            String destination = stripCrLf(bind.destination());
            checkNotDefault(source, bind);
            checkNotDefault(destination, bind);
            ChannelPermits.exchange(access(), Permission.WRITE, destination, bind);
            ChannelPermits.exchange(access(), Permission.READ, source, bind);
            bind(new Binding(source, Destination.exchange(destination), bind.routingKey(), bind.arguments()), bind,
                bind.noWait(), ExchangeMethod.BindOk.INSTANCE);
        } else if (method instanceof ExchangeMethod.Unbind unbind) {
            String source = stripCrLf(unbind.source());
            String destination = stripCrLf(unbind.destination());
            checkNotDefault(source, unbind);
            checkNotDefault(destination, unbind);
            ChannelPermits.exchange(access(), Permission.WRITE, destination, unbind);
            ChannelPermits.exchange(access(), Permission.READ, source, unbind);
            unbind(new Binding(source, Destination.exchange(destination), unbind.routingKey(), unbind.arguments()),
                unbind, unbind.noWait(), ExchangeMethod.UnbindOk.INSTANCE);
        } else {
            throw Amqp091Exception.of(ReplyCode.COMMAND_INVALID, method, "%s is not for a client to send",
                method.name());
        }
    }

    private Access access() {
        return channel.connection().access();
    }

    // ---- queues ---------------------------------------------------------------------------------------------

    /**
     * A name with every CR and LF taken out, as RabbitMQ's {@code rabbit_channel:strip_cr_lf/1} takes them out of the
     * exchange and queue names of {@code exchange.declare}, {@code exchange.delete}, {@code exchange.bind},
     * {@code exchange.unbind}, {@code queue.declare}, {@code queue.delete}, {@code queue.bind} and
     * {@code queue.unbind} (not those of {@code basic.*} or {@code queue.purge}, which it looks up as sent).
     */
    static String stripCrLf(String name) {
        if (name.indexOf('\n') < 0 && name.indexOf('\r') < 0) {
            return name;
        }
        StringBuilder stripped = new StringBuilder(name.length());
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c != '\n' && c != '\r') {
                stripped.append(c);
            }
        }
        return stripped.toString();
    }

    /** The queue a method names; an empty name means the channel's last declared queue, as in RabbitMQ. */
    String queueName(String name, Method cause) {
        if (!name.isEmpty()) {
            return name;
        }
        if (channel.lastDeclaredQueue().isEmpty()) {
            throw Amqp091Exception.of(ReplyCode.NOT_FOUND, cause, "no previously declared queue");
        }
        return channel.lastDeclaredQueue();
    }

    /** The queue, which this connection may use. */
    Queue existingQueue(String name, Method cause) {
        Queue queue = vhost.queue(name);
        if (queue == null) {
            try {
                queue = PeerLinks.remote(vhost, name); // never exclusive
            } catch (BrokerException e) {
                throw Amqp091Exception.of(e, cause);
            }
            if (queue != null) {
                return queue;
            }
            throw notFound("queue", name, cause);
        }
        checkAccess(queue, cause);
        return queue;
    }

    private void checkAccess(Queue queue, Method cause) {
        try {
            vhost.checkAccess(queue, channel.connection());
        } catch (BrokerException e) {
            throw locked(queue.name(), cause);
        }
    }

    private Amqp091Exception locked(String queue, Method cause) {
        return Amqp091Exception.of(ReplyCode.RESOURCE_LOCKED, cause, "cannot obtain exclusive access to locked "
            + "queue '%s' in vhost '%s'. It could be originally declared on another connection or the exclusive "
            + "property value does not match that of the original declaration.", queue, vhost.name());
    }

    private Amqp091Exception notFound(String kind, String name, Method cause) {
        return Amqp091Exception.of(ReplyCode.NOT_FOUND, cause, "no %s '%s' in vhost '%s'", kind, name, vhost.name());
    }

    private void queueDeclare(QueueMethod.Declare declare) {
        String name = stripCrLf(declare.queue());
        if (declare.passive()) {
            if (name.isEmpty()) {
                name = queueName(name, declare);
            }
            if (DirectReplyTo.QUEUE.equals(name) || channel.connection().directReplyTo().exists(name)) {
                answerDeclare(declare, name, 0, 1); // as RabbitMQ counts its pseudo-queue
                return;
            }
            if (vhost.queue(name) == null && vhost.remoteQueue(name) != null) {
                answerRemote(declare, name);
                return;
            }
            Queue queue = existingQueue(name, declare);
            queue.touch(); // a passive declaration renews an x-expires lease too (rabbit_amqqueue:stat/1)
            String declared = name;
            channel.await(queue.counts(), declare, counts -> answerDeclare(declare, declared, counts.ready(),
                counts.consumers()));
            return;
        }
        // the virtual host's default type first, as rabbit_channel does: a server-named queue is checked by it too
        Map<String, Object> arguments = vhost.withDefaultType(new QueueDeclaration(name, declare.durable(),
            declare.exclusive(), declare.autoDelete(), declare.arguments())).arguments();
        if (name.isEmpty()) {
            QueueType type = QueueType.of(arguments);
            if (!type.serverNamed()) {
                throw Amqp091Exception.of(ReplyCode.PRECONDITION_FAILED, declare,
                    "Cannot declare a server-named queue for type %s", type.module());
            }
            name = QueueDeclaration.generateName();
        } else if (name.startsWith(RESERVED)) {
            throw Amqp091Exception.of(ReplyCode.ACCESS_REFUSED, declare,
                "queue name '%s' contains reserved prefix 'amq.*'", name);
        }
        ChannelPermits.queue(access(), Permission.CONFIGURE, name, declare);
        if (declare.arguments().get("x-dead-letter-exchange") instanceof String dlx) {
            ChannelPermits.exchange(access(), Permission.WRITE, dlx, declare);
            ChannelPermits.queue(access(), Permission.READ, name, declare);
        }
        QueueDeclaration wanted = new QueueDeclaration(name, declare.durable(), declare.exclusive(),
            declare.autoDelete(), arguments);
        Queue existing = vhost.queue(name);
        QueueHomed remote = existing == null ? vhost.remoteQueue(name) : null;
        if (existing != null) {
            checkAccess(existing, declare);
            checkEquivalent(existing.declaration(), wanted, declare);
        } else if (remote != null) {
            checkEquivalent(remote.declaration(), wanted, declare);
            answerRemote(declare, name);
            return;
        } else {
            checkDeadLetterExchangeName(wanted, declare);
        }
        String declared = name;
        if (existing == null && QueueType.of(wanted.arguments()) == QueueType.STREAM) {
            // a new stream opens its log (files, directory syncs): on a management thread, not this event loop
            channel.offload(() -> vhost.declareQueue(wanted, channel.connection()), declare,
                queue -> channel.await(queue.counts(), declare,
                    counts -> answerDeclare(declare, declared, counts.ready(), counts.consumers())));
            return;
        }
        channel.await(vhost.declareQueueAsync(wanted, channel.connection()).thenCompose(Queue::counts), declare,
            counts -> answerDeclare(declare, declared, counts.ready(), counts.consumers()));
    }

    /**
     * A queue homed on another node: its counts are that node's, asked for there; 0 and 0 while it cannot be
     * reached (the queue is known here all the same).
     */
    private void answerRemote(QueueMethod.Declare declare, String name) {
        Queue proxy;
        try {
            proxy = PeerLinks.remote(vhost, name);
        } catch (BrokerException e) {
            proxy = null;
        }
        if (proxy == null) {
            answerDeclare(declare, name, 0, 0);
            return;
        }
        channel.await(proxy.counts().exceptionally(failure -> new io.skiffmq.core.queue.QueueCounts(0, 0, 0)),
            declare, counts -> answerDeclare(declare, name, counts.ready(), counts.consumers()));
    }

    private void answerDeclare(QueueMethod.Declare declare, String name, int messages, int consumers) {
        channel.lastDeclaredQueue(name);
        if (!declare.noWait()) {
            channel.reply(new QueueMethod.DeclareOk(name, messages, consumers));
        }
    }

    /**
     * For a new queue, {@code rabbit_channel} checks the dead-letter exchange's name before the queue checks its
     * arguments, and words a name that is no string its own way.
     */
    private void checkDeadLetterExchangeName(QueueDeclaration wanted, Method cause) {
        Object dlx = wanted.arguments().get("x-dead-letter-exchange");
        if (wanted.arguments().containsKey("x-dead-letter-exchange") && !(dlx instanceof String)) {
            throw Amqp091Exception.of(ReplyCode.PRECONDITION_FAILED, cause,
                "invalid type '%s' for arg 'x-dead-letter-exchange' in queue '%s' in vhost '%s'",
                HeaderValues.fieldType(dlx), wanted.name(), vhost.name());
        }
    }

    /** RabbitMQ's reply text for the first property that differs. */
    private void checkEquivalent(QueueDeclaration existing, QueueDeclaration wanted, Method cause) {
        if (existing.equivalent(wanted)) {
            return;
        }
        String arg;
        Object received;
        Object current;
        if (existing.durable() != wanted.durable()) {
            arg = "durable";
            received = wanted.durable();
            current = existing.durable();
        } else if (existing.exclusive() != wanted.exclusive()) {
            throw locked(wanted.name(), cause);
        } else if (existing.autoDelete() != wanted.autoDelete()) {
            arg = "auto_delete";
            received = wanted.autoDelete();
            current = existing.autoDelete();
        } else {
            arg = existing.differingArgument(wanted);
            received = argumentValue(wanted.arguments(), existing.arguments(), arg);
            current = argumentValue(existing.arguments(), wanted.arguments(), arg);
        }
        throw Amqp091Exception.of(ReplyCode.PRECONDITION_FAILED, cause,
            "inequivalent arg '%s' for queue '%s' in vhost '%s': received %s but current is %s", arg, wanted.name(),
            vhost.name(), quote(received), quote(current));
    }

    /** An empty routing key with the shortcut queue name means the queue's name, for bind and unbind (RabbitMQ). */
    private static String bindingKey(String namedQueue, String routingKey, String queue) {
        return namedQueue.isEmpty() && routingKey.isEmpty() ? queue : routingKey;
    }

    /**
     * How {@code rabbit_misc:assert_args_equivalence1/4} shows one side's value of a differing argument: when both
     * sides have it, the bare value (a void one as none); when only this side has it, the value and its type.
     */
    private static Object argumentValue(java.util.Map<String, Object> side, java.util.Map<String, Object> other,
            String key) {
        if (!side.containsKey(key)) {
            return null;
        }
        Object value = side.get(key);
        return other.containsKey(key) ? value : "the value '" + (value == null ? "undefined" : value)
            + "' of type '" + HeaderValues.fieldType(value) + "'";
    }

    private void queueBind(QueueMethod.Bind bind) {
        String queue = stripCrLf(queueName(bind.queue(), bind));
        String exchange = stripCrLf(bind.exchange());
        String key = bindingKey(bind.queue(), bind.routingKey(), queue);
        checkNotDefault(exchange, bind);
        ChannelPermits.queue(access(), Permission.WRITE, queue, bind);
        ChannelPermits.exchange(access(), Permission.READ, exchange, bind);
        ChannelPermits.topic(access(), vhost, Permission.READ, exchange, key, bind);
        Queue existing = vhost.queue(queue);
        if (existing == null && vhost.remoteQueue(queue) == null) {
            throw notFound("queue", queue, bind);
        }
        if (existing != null) {
            checkAccess(existing, bind);
        }
        bind(new Binding(exchange, Destination.queue(queue), key, bind.arguments()), bind, bind.noWait(),
            QueueMethod.BindOk.INSTANCE);
    }

    private void queueDelete(QueueMethod.Delete delete) {
        queueDelete(delete, false);
    }

    /** @param caughtUp whether this node has applied what was committed when the delete arrived */
    private void queueDelete(QueueMethod.Delete delete, boolean caughtUp) {
        String name = stripCrLf(queueName(delete.queue(), delete));
        ChannelPermits.queue(access(), Permission.CONFIGURE, name, delete);
        Queue queue = vhost.queue(name);
        QueueHomed remote = queue == null ? vhost.remoteQueue(name) : null;
        if (remote != null) {
            if (delete.ifUnused() || delete.ifEmpty()) {
                throw Amqp091Exception.of(vhost.homeNodeDown(remote), delete); // its counts are its node's
            }
            CompletableFuture<Integer> deleted = vhost.deleteRemoteQueue(name);
            channel.await(deleted == null ? CompletableFuture.completedFuture(0) : deleted, delete, count -> {
                if (!delete.noWait()) {
                    channel.reply(new QueueMethod.DeleteOk(count));
                }
            });
            return;
        }
        if (queue == null) {
            if (!caughtUp && vhost.clustered()) {
                // declared on another node and not applied here yet? Look again once it would be
                channel.await(vhost.caughtUp(MetadataTimeouts.QUEUE_DELETE), delete, done -> queueDelete(delete, true));
                return;
            }
            // deleting what is not there is fine since RabbitMQ 3.2
            if (!delete.noWait()) {
                channel.reply(new QueueMethod.DeleteOk(0));
            }
            return;
        }
        checkAccess(queue, delete);
        if (queue.type() == QueueType.QUORUM && (delete.ifUnused() || delete.ifEmpty())) {
            // rabbit_quorum_queue:delete/4 refuses both conditions, if-unused first
            throw Amqp091Exception.of(ReplyCode.NOT_IMPLEMENTED, delete, "cannot delete queue '%s' in vhost '%s'. "
                + "queue.delete operations with %s flag set are not supported by quorum queues", name, vhost.name(),
                delete.ifUnused() ? "if-unused" : "if-empty");
        }
        channel.await(queue.counts(), delete, counts -> {
            if (delete.ifUnused() && counts.consumers() > 0) {
                throw Amqp091Exception.of(ReplyCode.PRECONDITION_FAILED, delete, "queue '%s' in vhost '%s' in use",
                    name, vhost.name());
            }
            if (delete.ifEmpty() && counts.ready() > 0) {
                throw Amqp091Exception.of(ReplyCode.PRECONDITION_FAILED, delete,
                    "queue '%s' in vhost '%s' not empty", name, vhost.name());
            }
            CompletableFuture<Integer> deleted = vhost.deleteQueue(queue);
            channel.await(deleted == null ? CompletableFuture.completedFuture(0) : deleted, delete, count -> {
                if (!delete.noWait()) {
                    channel.reply(new QueueMethod.DeleteOk(count));
                }
            });
        });
    }

    // ---- exchanges ------------------------------------------------------------------------------------------

    private void exchangeDeclare(ExchangeMethod.Declare declare) {
        String name = stripCrLf(declare.exchange());
        checkNotDefault(name, declare);
        if (declare.passive()) {
            if (vhost.exchange(name) == null) {
                throw notFound("exchange", name, declare);
            }
            if (!declare.noWait()) {
                channel.reply(ExchangeMethod.DeclareOk.INSTANCE);
            }
            return;
        }
        Exchange.Type type;
        try {
            type = Exchange.Type.of(declare.type());
        } catch (IllegalArgumentException e) {
            throw Amqp091Exception.of(ReplyCode.COMMAND_INVALID, declare, "unknown exchange type '%s'",
                declare.type());
        }
        ChannelPermits.exchange(access(), Permission.CONFIGURE, name, declare);
        Exchange wanted = new Exchange(name, type, declare.durable(), declare.autoDelete(), declare.internal(),
            declare.arguments());
        Exchange existing = vhost.exchange(name);
        if (existing != null) {
            // an equivalent redeclaration is fine, amq.* ones included (PerfTest redeclares amq.fanout)
            checkEquivalent(existing, wanted, declare);
            if (!declare.noWait()) {
                channel.reply(ExchangeMethod.DeclareOk.INSTANCE);
            }
            return;
        }
        if (name.startsWith(RESERVED)) {
            throw Amqp091Exception.of(ReplyCode.ACCESS_REFUSED, declare,
                "exchange name '%s' contains reserved prefix 'amq.*'", name);
        }
        // rabbit_channel checks the alternate exchange of a new exchange only (rabbit_misc:r_arg/4)
        if (declare.arguments().containsKey(ALTERNATE_EXCHANGE)) {
            if (!(declare.arguments().get(ALTERNATE_EXCHANGE) instanceof String alternate)) {
                throw Amqp091Exception.of(ReplyCode.PRECONDITION_FAILED, declare,
                    "invalid type '%s' for arg '%s' in exchange '%s' in vhost '%s'",
                    HeaderValues.fieldType(declare.arguments().get(ALTERNATE_EXCHANGE)), ALTERNATE_EXCHANGE, name,
                    vhost.name());
            }
            ChannelPermits.exchange(access(), Permission.READ, name, declare);
            ChannelPermits.exchange(access(), Permission.WRITE, alternate, declare);
        }
        channel.offload(() -> vhost.declareExchange(wanted), declare, done -> {
            if (!declare.noWait()) {
                channel.reply(ExchangeMethod.DeclareOk.INSTANCE);
            }
        });
    }

    private void checkEquivalent(Exchange existing, Exchange wanted, Method cause) {
        String arg;
        Object received;
        Object current;
        if (existing.type() != wanted.type()) {
            arg = "type";
            received = wanted.type().value();
            current = existing.type().value();
        } else if (existing.durable() != wanted.durable()) {
            arg = "durable";
            received = wanted.durable();
            current = existing.durable();
        } else if (existing.autoDelete() != wanted.autoDelete()) {
            arg = "auto_delete";
            received = wanted.autoDelete();
            current = existing.autoDelete();
        } else if (existing.internal() != wanted.internal()) {
            arg = "internal";
            received = wanted.internal();
            current = existing.internal();
        } else if (existing.arguments().containsKey(ALTERNATE_EXCHANGE)
                != wanted.arguments().containsKey(ALTERNATE_EXCHANGE)
                || !java.util.Objects.equals(existing.alternateExchange(), wanted.alternateExchange())) {
            // the only argument RabbitMQ compares; others are kept as first declared
            arg = ALTERNATE_EXCHANGE;
            received = argumentValue(wanted.arguments(), existing.arguments(), arg);
            current = argumentValue(existing.arguments(), wanted.arguments(), arg);
        } else {
            return;
        }
        throw Amqp091Exception.of(ReplyCode.PRECONDITION_FAILED, cause,
            "inequivalent arg '%s' for exchange '%s' in vhost '%s': received %s but current is %s", arg,
            wanted.name(), vhost.name(), quote(received), quote(current));
    }

    private void exchangeDelete(ExchangeMethod.Delete delete) {
        exchangeDelete(delete, false);
    }

    /** @param caughtUp whether this node has applied what was committed when the delete arrived */
    private void exchangeDelete(ExchangeMethod.Delete delete, boolean caughtUp) {
        String name = stripCrLf(delete.exchange());
        checkNotDefault(name, delete);
        ChannelPermits.exchange(access(), Permission.CONFIGURE, name, delete);
        if (name.startsWith(RESERVED)) {
            throw Amqp091Exception.of(ReplyCode.ACCESS_REFUSED, delete,
                "deletion of system exchange '%s' in vhost '%s' not allowed", name, vhost.name());
        }
        if (vhost.exchange(name) == null) {
            if (!caughtUp && vhost.clustered()) {
                channel.await(vhost.caughtUp(String.format(MetadataTimeouts.EXCHANGE_DELETE, name, vhost.name())), delete,
                    done -> exchangeDelete(delete, true));
                return;
            }
            if (!delete.noWait()) {
                channel.reply(ExchangeMethod.DeleteOk.INSTANCE);
            }
            return;
        }
        if (delete.ifUnused() && vhost.bindings().hasBindingsFrom(name)) {
            throw Amqp091Exception.of(ReplyCode.PRECONDITION_FAILED, delete, "exchange '%s' in vhost '%s' in use",
                name, vhost.name());
        }
        channel.offload(() -> vhost.deleteExchange(name), delete, done -> {
            if (!delete.noWait()) {
                channel.reply(ExchangeMethod.DeleteOk.INSTANCE);
            }
        });
    }

    // ---- bindings -------------------------------------------------------------------------------------------

    private void bind(Binding binding, Method cause, boolean noWait, Method ok) {
        checkEnds(binding, cause);
        channel.await(vhost.bindAsync(binding), cause, done -> {
            if (!noWait) {
                channel.reply(ok);
            }
        });
    }

    /**
     * Unbinding what is not bound, from or to what does not exist, is fine, as in RabbitMQ 4
     * ({@code rabbit_db_binding:delete/2}); another connection's exclusive queue is locked only when the binding is
     * there.
     */
    private void unbind(Binding binding, Method cause, boolean noWait, Method ok) {
        checkNotDefault(binding.source(), cause);
        if (!vhost.bindings().contains(binding) && vhost.clustered()) {
            // bound on another node and not applied here yet? Look again once it would be
            channel.await(vhost.caughtUp(MetadataTimeouts.UNBIND), cause, done -> unbindNow(binding, cause, noWait, ok));
            return;
        }
        unbindNow(binding, cause, noWait, ok);
    }

    private void unbindNow(Binding binding, Method cause, boolean noWait, Method ok) {
        channel.offload(() -> {
            try {
                return vhost.unbind(binding, channel.connection());
            } catch (BrokerException e) {
                throw e.kind() == BrokerException.Kind.RESOURCE_LOCKED ? locked(binding.destination().name(), cause) : e;
            }
        }, cause, done -> {
            if (!noWait) {
                channel.reply(ok);
            }
        });
    }

    private void checkEnds(Binding binding, Method cause) {
        if (vhost.exchange(binding.source()) == null) {
            throw notFound("exchange", binding.source(), cause);
        }
        Destination d = binding.destination();
        if (d.isExchange() ? vhost.exchange(d.name()) == null
                : vhost.queue(d.name()) == null && vhost.remoteQueue(d.name()) == null) {
            throw notFound(d.isExchange() ? "exchange" : "queue", d.name(), cause);
        }
    }

    private static void checkNotDefault(String exchange, Method cause) {
        if (exchange.isEmpty()) {
            throw Amqp091Exception.of(ReplyCode.ACCESS_REFUSED, cause,
                "operation not permitted on the default exchange");
        }
    }

    private static String quote(Object value) {
        if (value == null) {
            return "none";
        }
        String text = value.toString();
        return text.startsWith("the value ") ? text : "'" + text + "'";
    }
}
