package io.skiffmq.server.amqp091;

import io.skiffmq.server.authz.Access;
import io.skiffmq.server.authz.Permission;
import io.skiffmq.codec.amqp091.BasicMethod;
import io.skiffmq.codec.amqp091.ConfirmMethod;
import io.skiffmq.codec.amqp091.Method;
import io.skiffmq.codec.amqp091.ReplyCode;
import io.skiffmq.codec.amqp091.TxMethod;
import io.skiffmq.core.BrokerException;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.message.Amqp091Message;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.publish.Publisher;
import io.skiffmq.core.tx.Transaction;

/**
 * A channel's publishing side: what a published message must be to be taken (its {@code user_id}, expiration,
 * {@code reply_to}), routing through the core's {@link Publisher} (or straight to a direct reply-to channel),
 * {@code basic.return} for mandatory messages that go nowhere, and the two modes a channel may be in: publisher
 * confirms ({@link PublisherConfirms}) or a transaction (the core's {@link Transaction} holds its messages; the
 * channel's {@link DeliveryTags} hold its acks). Owned by the connection's event loop; the publisher reports
 * confirms there.
 */
final class ChannelPublishing implements Publisher.Confirms, PublisherConfirms.Acks {

    private final Amqp091Channel channel;
    private final Amqp091ConnectionHandler connection;
    private final VirtualHost vhost;
    private final FrameOutput output;
    /** The connection's permission checks (channels open only after {@code connection.open}: never null). */
    private final Access access;
    private Publisher publisher;
    private PublisherConfirms confirms;
    /** Its settlements are the channel's delivery tags' to hold: this holds messages only. */
    private Transaction<Void> transaction;
    /** A queue holds its publishers back: the connection is not read until it lets go ({@link #holdEnded}). */
    private boolean held;
    private final Runnable resumeFromHold;

    ChannelPublishing(Amqp091Channel channel, VirtualHost vhost) {
        this.channel = channel;
        this.connection = channel.connection();
        this.vhost = vhost;
        this.output = connection.output();
        this.resumeFromHold = () -> connection.executor().execute(this::holdEnded);
        this.access = connection.access();
    }

    /** True in confirm mode ({@code confirm.select}). */
    boolean confirming() {
        return confirms != null;
    }

    /** True in a transaction: acks wait for the commit too. */
    Transaction<Void> transaction() {
        return transaction;
    }

    /**
     * The topic permission refusal for the message's routing key or one its CC and BCC headers name, when it goes
     * to a topic exchange (RabbitMQ checks every key, {@code check_write_permitted_on_topics/4}).
     */
    private String topicRefusal(Amqp091Message message, java.util.List<String> moreKeys) {
        io.skiffmq.core.Exchange exchange = vhost.exchange(message.exchange());
        if (exchange == null || exchange.type() != io.skiffmq.core.Exchange.Type.TOPIC) {
            return null;
        }
        String refusal = access.topicRefusal(Permission.WRITE, message.exchange(), message.routingKey());
        for (int i = 0; moreKeys != null && refusal == null && i < moreKeys.size(); i++) {
            refusal = access.topicRefusal(Permission.WRITE, message.exchange(), moreKeys.get(i));
        }
        return refusal;
    }

    /**
     * The keys the message's CC and BCC headers name; a header that is no array refuses the message now, as
     * RabbitMQ refuses it on {@code basic.publish} ({@code mc_amqpl:message/3}), a transaction's too.
     */
    private static java.util.List<String> headerRoutes(Amqp091Message message, BasicMethod.Publish publish) {
        try {
            return message.headerRoutes();
        } catch (BrokerException e) {
            message.release();
            throw Amqp091Exception.of(e, publish);
        } catch (IllegalArgumentException e) {
            message.release();
            throw Amqp091Exception.of(ReplyCode.SYNTAX_ERROR, publish, "%s", e.getMessage());
        }
    }

    /** A whole message from the client: checked, then routed (or held by the transaction). */
    void received(Amqp091Message message, BasicMethod.Publish publish) {
        if (message.invalidExpiration() != null) {
            String expiration = message.invalidExpiration();
            message.release();
            throw Amqp091Exception.of(ReplyCode.PRECONDITION_FAILED, publish, "invalid expiration '%s'", expiration);
        }
        String refusal = access.refusal(Permission.WRITE, Access.Resource.EXCHANGE, message.exchange());
        if (refusal == null && (access.hasTopicPermissions() || transaction != null)) {
            // otherwise the publisher reads them when it routes the message: one look at its headers, not two
            java.util.List<String> moreKeys = headerRoutes(message, publish);
            refusal = access.hasTopicPermissions() ? topicRefusal(message, moreKeys) : null;
        }
        if (refusal != null) {
            message.release();
            throw Amqp091Exception.of(ReplyCode.ACCESS_REFUSED, publish, "%s", refusal);
        }
        String userIdRefusal = message.userId() == null ? null : access.userIdRefusal(message.userId());
        if (userIdRefusal != null) {
            message.release();
            throw Amqp091Exception.of(ReplyCode.PRECONDITION_FAILED, publish, "%s", userIdRefusal);
        }
        if (DirectReplyTo.QUEUE.equals(message.replyTo())) {
            if (channel.replyAddress() == null) {
                message.release();
                throw Amqp091Exception.of(ReplyCode.PRECONDITION_FAILED, publish, "fast reply consumer does not exist");
            }
            message = DirectReplyTo.withReplyTo(message, channel.replyAddress());
        }
        if (transaction != null) {
            transaction.publish(message, publish.mandatory());
            return;
        }
        publish(message, publish.mandatory(), confirms == null ? -1 : confirms.next(), publish);
    }

    /**
     * Routes a message; a mandatory one that goes nowhere comes back as {@code basic.return}. In confirm mode, one
     * that no queue will confirm (it went nowhere, or straight to a direct reply-to consumer) is confirmed at once,
     * as RabbitMQ does.
     *
     * @return true when queues took it, and so a confirm for {@code confirmTag} will come
     */
    private boolean publish(Message message, boolean mandatory, long confirmTag, Method cause) {
        if (mandatory) {
            message.retain(); // kept for the return
        }
        Publisher.Routed routed;
        boolean direct = message.exchange().isEmpty() && message.routingKey().startsWith(DirectReplyTo.PREFIX);
        try {
            if (direct) {
                routed = connection.directReplyTo().deliver(message) ? Publisher.Routed.ROUTED
                    : Publisher.Routed.UNROUTED;
                connection.counters().received(confirmTag >= 0); // the Publisher counts the others
                if (routed == Publisher.Routed.ROUTED) {
                    connection.counters().routed();
                }
            } else {
                routed = publisher().publish(message, confirmTag);
                if (!held && publisher.heldBack(resumeFromHold)) {
                    held = true;
                    connection.suspend(); // 0-9-1 has no credit: the socket is not read, as RabbitMQ's flow does
                }
            }
        } catch (BrokerException e) {
            if (mandatory) {
                message.release();
            }
            throw switch (e.kind()) {
                case NOT_FOUND -> Amqp091Exception.of(ReplyCode.NOT_FOUND, cause, "no exchange '%s' in vhost '%s'",
                    message.exchange(), vhost.name());
                case ACCESS_REFUSED -> Amqp091Exception.of(ReplyCode.ACCESS_REFUSED, cause,
                    "cannot publish to internal exchange '%s' in vhost '%s'", message.exchange(), vhost.name());
                default -> Amqp091Exception.of(e, cause);
            };
        } catch (IllegalArgumentException e) {
            if (mandatory) {
                message.release();
            }
            throw Amqp091Exception.of(ReplyCode.SYNTAX_ERROR, cause, "%s", e.getMessage());
        }
        if (routed == Publisher.Routed.UNROUTED) {
            connection.counters().unroutable(mandatory);
        }
        if (routed == Publisher.Routed.UNROUTED && mandatory) {
            Message returned = message.withoutBcc(); // it is no consumer's to see either
            output.content(channel.number(), new BasicMethod.Return(ReplyCode.NO_ROUTE.code(),
                ReplyCode.NO_ROUTE.text(), message.exchange(), message.routingKey()), returned);
            if (returned != message) {
                returned.release();
            }
        }
        if (mandatory) {
            message.release();
        }
        boolean confirmWillCome = routed == Publisher.Routed.ROUTED && !direct;
        if (!confirmWillCome && confirmTag >= 0 && confirms != null) {
            connection.counters().confirmed(1); // as RabbitMQ counts it: a confirm sent
            confirms.confirmed(confirmTag, confirmTag);
            confirms.flush(this);
        }
        return confirmWillCome;
    }

    private void holdEnded() {
        held = false;
        connection.resume();
    }

    private Publisher publisher() {
        if (publisher == null) {
            publisher = new Publisher(vhost, connection.executor(), this, connection.counters());
            connection.counters().publishers(1); // a publishing channel, as RabbitMQ counts publishers
        }
        return publisher;
    }

    // ---- confirms -------------------------------------------------------------------------------------------

    void confirmSelect(ConfirmMethod.Select select) {
        if (transaction != null) {
            throw Amqp091Exception.of(ReplyCode.PRECONDITION_FAILED, select, "cannot switch from tx to confirm mode");
        }
        if (confirms == null) {
            confirms = new PublisherConfirms();
        }
        if (!select.noWait()) {
            channel.reply(ConfirmMethod.SelectOk.INSTANCE);
        }
    }

    /** From the publisher: confirm mode's numbers, or a transaction's. */
    @Override
    public void confirmed(long firstTag, long lastTag) {
        if (confirms != null) {
            confirms.confirmed(firstTag, lastTag);
        } else if (transaction != null) {
            transaction.confirmed(firstTag, lastTag);
        }
    }

    @Override
    public void rejected(long firstTag, long lastTag) {
        if (confirms != null) {
            confirms.refused(firstTag, lastTag);
        } else if (transaction != null) {
            transaction.confirmed(firstTag, lastTag); // the commit is over for them too
        }
    }

    @Override
    public void batchEnd() {
        if (channel.closing()) {
            return;
        }
        if (confirms != null) {
            confirms.flush(this);
            connection.flushLater();
        } else if (transaction != null && transaction.committing() && transaction.published()) {
            transaction.commitDone();
            channel.reply(TxMethod.CommitOk.INSTANCE);
            connection.flushLater();
            connection.resume();
        }
    }

    @Override
    public void ack(long tag, boolean multiple) {
        output.method(channel.number(), new BasicMethod.Ack(tag, multiple));
    }

    @Override
    public void nack(long tag, boolean multiple) {
        output.method(channel.number(), new BasicMethod.Nack(tag, multiple, false));
    }

    // ---- transactions ---------------------------------------------------------------------------------------

    void onTx(TxMethod method) {
        if (method instanceof TxMethod.Select) {
            if (confirms != null) {
                throw Amqp091Exception.of(ReplyCode.PRECONDITION_FAILED, method,
                    "cannot switch from confirm to tx mode");
            }
            if (transaction == null) {
                transaction = new Transaction<>();
            }
            channel.reply(TxMethod.SelectOk.INSTANCE);
            return;
        }
        if (transaction == null) {
            throw Amqp091Exception.of(ReplyCode.PRECONDITION_FAILED, method, "channel is not transactional");
        }
        if (method instanceof TxMethod.Commit) {
            commit(method);
        } else if (method instanceof TxMethod.Rollback) {
            transaction.rollback(none -> { });
            channel.rollbackSettlements();
            channel.reply(TxMethod.RollbackOk.INSTANCE);
        } else {
            throw Amqp091Exception.of(ReplyCode.COMMAND_INVALID, method, "unexpected %s", method.name());
        }
    }

    /**
     * Publishes what the transaction holds, then settles its acks; {@code commit-ok} goes once every published
     * message is as safe as a confirm would say (durable ones synced). Frames after the commit wait until then.
     */
    private void commit(Method cause) {
        Transaction<Void> tx = transaction;
        tx.publishAll((message, mandatory, tag) -> publish(message, mandatory, tag, cause));
        channel.commitSettlements();
        if (tx.published()) {
            tx.commitDone();
            channel.reply(TxMethod.CommitOk.INSTANCE);
        } else {
            connection.suspend(); // until the publisher confirms the rest (batchEnd)
        }
    }

    /** The channel closed: confirms still to come are dropped, a transaction's messages too. */
    void close() {
        if (publisher != null) {
            publisher.close();
            connection.counters().publishers(-1);
        }
        if (transaction != null) {
            transaction.rollback(none -> { }); // held acks: the channel's close requeues their deliveries
        }
    }
}
