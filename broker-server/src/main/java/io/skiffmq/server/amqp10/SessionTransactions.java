package io.skiffmq.server.amqp10;

import io.skiffmq.codec.amqp10.AmqpDecodeException;
import io.skiffmq.codec.amqp10.AmqpError;
import io.skiffmq.codec.amqp10.DispositionPerformative;
import io.skiffmq.codec.amqp10.PerformativeCode;
import io.skiffmq.codec.amqp10.TransferPerformative;
import io.skiffmq.core.Exchange;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.publish.Publisher;
import io.skiffmq.core.queue.Outcome;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.routing.Router;
import io.skiffmq.server.config.TransactionSettings;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.messaging.Accepted;
import org.apache.qpid.proton.amqp.messaging.Rejected;
import org.apache.qpid.proton.amqp.transaction.TransactionalState;
import org.apache.qpid.proton.amqp.transport.DeliveryState;
import org.apache.qpid.proton.amqp.transport.ErrorCondition;

/**
 * A session's open transactions [4], by txn-id: declared on a {@link CoordinatorLink}, given work by transactional
 * transfers ({@link IncomingLink}) and dispositions ({@link UnsettledDeliveries}), discharged on the coordinator.
 * A session may have many at once (Artemis allows one); an id is known only to the session that declared it.
 *
 * <p>A commit first checks that every held message can go somewhere (its exchange exists and is not internal, and
 * unless it was sent to a topic a queue takes it): otherwise nothing is published and the commit fails with
 * {@code amqp:transaction:rollback}, as a message the transaction accepted must not vanish. Then
 * {@link LocalTransaction#commit} publishes and waits for the confirms.
 *
 * <p>Transactions end with their coordinator link, their session and their connection: rolled back.
 *
 * <p>Owned by the connection's event loop.
 */
final class SessionTransactions {
    /** [4.4.3] the flow property that asks for transactional acquisition. */
    private static final Symbol TXN_ID = Symbol.valueOf("txn-id");
    private final AmqpSession session;
    private final TransactionSettings settings;
    private final Map<Binary, LocalTransaction> open = new HashMap<>();
    private final Router router = new Router();
    private final List<Queue> routed = new ArrayList<>();
    private TransactionBudget budget;

    SessionTransactions(AmqpSession session) {
        this.session = session;
        this.settings = session.config().transactions();
    }

    private TransactionBudget budget() {
        if (budget == null) {
            budget = TransactionBudget.of(session.connection().context().channel(), settings.maxBytes());
        }
        return budget;
    }

    /** The txn-id a transfer's {@code transactional-state} names, or null when it has none. */
    static Binary txnIdOf(TransferPerformative transfer) {
        long code = transfer.stateCode();
        if (code >= 0 && code != PerformativeCode.TRANSACTIONAL_STATE) {
            return null;
        }
        try {
            return transfer.state() instanceof TransactionalState state ? state.getTxnId() : null;
        } catch (AmqpDecodeException e) {
            throw AmqpException.sessionError(AmqpError.DECODE_ERROR, "transfer state: %s", e.getMessage());
        }
    }

    /** A disposition's {@code transactional-state}, or null when its state is another. */
    static TransactionalState stateOf(DispositionPerformative disposition) throws AmqpDecodeException {
        long code = disposition.stateCode();
        if (code >= 0 && code != PerformativeCode.TRANSACTIONAL_STATE) {
            return null;
        }
        return disposition.state() instanceof TransactionalState state ? state : null;
    }

    /**
     * True when a flow asks its link to acquire in a transaction ([4.4.3] a {@code txn-id} in its properties),
     * which we do not do: the link is detached with {@code amqp:not-implemented}.
     */
    static boolean acquiresInTransaction(io.skiffmq.codec.amqp10.FlowPerformative flow) {
        try {
            Map<?, ?> properties = flow.properties();
            return properties != null && properties.containsKey(TXN_ID);
        } catch (AmqpDecodeException e) {
            throw AmqpException.sessionError(AmqpError.DECODE_ERROR, "flow properties: %s", e.getMessage());
        }
    }

    /** Declares a transaction on {@code coordinator}; returns its new id. */
    Binary declare(CoordinatorLink coordinator) {
        Binary id = budget().nextId();
        open.put(id, new LocalTransaction(id, coordinator));
        return id;
    }

    /** True while the session has a transaction declared and not discharged (the HTTP API's transactional). */
    boolean any() {
        return !open.isEmpty();
    }

    /** True when {@code id} names a transaction of this session that is not being discharged. */
    boolean isOpen(Binary id) {
        LocalTransaction tx = open.get(id);
        return tx != null && !tx.committing();
    }

    /**
     * A transactional transfer: its message is held until the discharge.
     *
     * @param message one reference, which this takes over
     * @param mayGoNowhere sent to a topic: going to no queue is no failure
     * @return the state to settle the delivery with: {@code transactional-state(id, accepted)}, or rejected
     */
    DeliveryState publish(Binary id, Message message, boolean mayGoNowhere) {
        LocalTransaction tx = open.get(id);
        if (tx == null || tx.committing()) {
            message.release();
            return rejected(AmqpError.TRANSACTION_UNKNOWN_ID, "no open transaction " + hex(id) + " on this session");
        }
        String refusal = null;
        if (tx.work().heldMessages() >= settings.maxMessages()) {
            refusal = "transaction " + hex(id) + " holds " + settings.maxMessages() + " messages"
                + " (max-transaction-messages)";
        } else if (!budget().take(message.size())) {
            refusal = "the connection's transactions hold " + budget().heldBytes() + " bytes; "
                + message.size() + " more would pass max-transaction-bytes (" + budget().maxBytes() + ")";
        }
        if (refusal != null) {
            message.release();
            tx.rollbackOnly(refusal);
            return rejected(AmqpError.RESOURCE_LIMIT_EXCEEDED, refusal);
        }
        tx.work().publish(message, mayGoNowhere);
        TransactionalState state = new TransactionalState();
        state.setTxnId(id);
        state.setOutcome(Accepted.getInstance());
        return state;
    }

    /** A consumer's transactional disposition of deliveries {@code firstTag..lastTag} of {@code link}. */
    void settle(Binary id, UnsettledDeliveries.Settler link, long firstTag, long lastTag, Outcome outcome) {
        open.get(id).work().settle(new LocalTransaction.Settlement(link, firstTag, lastTag, outcome));
    }

    /**
     * Discharges transaction {@code id}: rolled back when {@code fail}, else committed. {@code reply} hears the
     * state to settle the discharge with, at once or, for a commit that publishes, once the confirms are in.
     */
    void discharge(Binary id, boolean fail, Consumer<DeliveryState> reply) {
        LocalTransaction tx = open.get(id);
        if (tx == null || tx.committing()) {
            reply.accept(rejected(AmqpError.TRANSACTION_UNKNOWN_ID, "no open transaction " + hex(id) + " on this session"));
            return;
        }
        if (fail) {
            forget(tx);
            tx.rollback();
            reply.accept(Accepted.getInstance());
            return;
        }
        String problem = tx.rollbackOnlyReason();
        if (problem == null) {
            problem = tx.work().check(this::problem);
        }
        if (problem == null) {
            problem = tx.work().checkSettlements(SessionTransactions::settlementProblem);
        }
        if (problem != null) {
            forget(tx);
            tx.rollback();
            reply.accept(rejected(AmqpError.TRANSACTION_ROLLBACK, problem));
            return;
        }
        budget().giveBack(tx.work().heldBytes());
        Publisher publisher = new Publisher(session.vhost(), session.executor(), tx,
            session.connection().counters());
        tx.commit(publisher, refusal -> {
            open.remove(id);
            reply.accept(refusal == null ? Accepted.getInstance()
                : rejected(AmqpError.TRANSACTION_ROLLBACK, refusal));
        });
    }

    /**
     * Why a held settlement cannot be applied at the commit: its consumer link ended, and its queue took the
     * deliveries back then (they may be with another consumer already); null when it can.
     */
    private static String settlementProblem(LocalTransaction.Settlement settlement) {
        return settlement.link() instanceof Link link && link.isClosed()
            ? "a consumer link with deliveries settled in the transaction was detached before the commit" : null;
    }

    /** Why a held message cannot be published at the commit; null when it can. */
    private String problem(Message message, boolean mayGoNowhere) {
        VirtualHost vhost = session.vhost();
        Exchange exchange = vhost.exchange(message.exchange());
        if (exchange == null) {
            return "no exchange '" + message.exchange() + "'";
        }
        if (exchange.internal()) {
            return "exchange '" + exchange.name() + "' is internal";
        }
        java.util.List<String> moreKeys;
        try {
            moreKeys = message.headerRoutes();
        } catch (io.skiffmq.core.BrokerException | IllegalArgumentException e) {
            return e.getMessage();
        }
        if (mayGoNowhere) {
            return null;
        }
        try {
            if (!vhost.route(exchange, message.routingKey(), moreKeys, message, router, routed).isEmpty()) {
                return null;
            }
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        } finally {
            routed.clear();
        }
        return message.exchange().isEmpty() ? "no queue '" + message.routingKey() + "'"
            : "exchange '" + message.exchange() + "' routes '" + message.routingKey() + "' to no queue";
    }

    /** The coordinator link ended: its transactions roll back [4.3]. */
    void coordinatorClosed(CoordinatorLink coordinator) {
        rollbackWhere(tx -> tx.coordinator() == coordinator);
    }

    /** The session ends: every open transaction rolls back; commits under way finish without a reply. */
    void clear() {
        rollbackWhere(tx -> true);
    }

    private void rollbackWhere(java.util.function.Predicate<LocalTransaction> which) {
        List<LocalTransaction> ending = new ArrayList<>();
        for (Iterator<LocalTransaction> i = open.values().iterator(); i.hasNext(); ) {
            LocalTransaction tx = i.next();
            if (!tx.committing() && which.test(tx)) {
                i.remove();
                ending.add(tx);
            }
        }
        for (LocalTransaction tx : ending) {
            budget().giveBack(tx.work().heldBytes());
            tx.rollback();
        }
    }

    private void forget(LocalTransaction tx) {
        open.remove(tx.id());
        budget().giveBack(tx.work().heldBytes());
    }

    /** A txn-id as the descriptions show it: hex digits. */
    static String hex(Binary id) {
        StringBuilder hex = new StringBuilder(id.getLength() * 2);
        for (int i = 0; i < id.getLength(); i++) {
            hex.append(String.format("%02x", id.getArray()[id.getArrayOffset() + i]));
        }
        return hex.toString();
    }

    private static Rejected rejected(AmqpError condition, String description) {
        Rejected rejected = new Rejected();
        rejected.setError(new ErrorCondition(condition.symbol(), description));
        return rejected;
    }
}
