package io.skiffmq.server.amqp10;

import io.skiffmq.codec.amqp10.AmqpError;
import io.skiffmq.codec.amqp10.SerialNumber;
import io.skiffmq.codec.amqp10.TransferPerformative;

/**
 * The credit a receiving link of ours (a publisher's, a transaction coordinator's, a management request link)
 * grants its sender [2.6.7]: topped up to a batch once half is used, one taken by the first transfer of each
 * delivery, which also counts in the delivery-count; a delivery beyond it is
 * {@code amqp:link:transfer-limit-exceeded}. Credit can also be taken back ({@link #revoke}); the deliveries the
 * sender had sent before it heard are then taken as usual, as [2.6.7] allows. Owned by the connection's event loop,
 * as its link is.
 */
final class ReceiverCredit {
    private final AmqpSession session;
    private final long handle;
    private final int batch;
    private long deliveryCount;
    private long credit;
    /** Credit taken back by {@link #revoke}: deliveries the sender may have sent before it heard. */
    private long revoked;

    ReceiverCredit(AmqpSession session, long handle, long deliveryCount, int batch) {
        this.session = session;
        this.handle = handle;
        this.deliveryCount = deliveryCount;
        this.batch = batch;
    }

    /** Half the batch or less is left. */
    boolean low() {
        return credit <= batch / 2;
    }

    /** Credit back up to a whole batch, told to the sender. */
    void grant() {
        credit = batch;
        revoked = 0; // the sender counts what it still has in flight against this grant, as we do
        echo();
    }

    /** No credit left, told to the sender; what it had may still be on its way. */
    void revoke() {
        revoked += credit;
        credit = 0;
        echo();
    }

    /** Tells the sender the link's state (a flow it asked to be echoed, or a grant). */
    void echo() {
        session.writeLinkFlow(handle, deliveryCount, credit, -1, false);
    }

    /** The first transfer of a delivery takes one credit; with none left, the link is in error. */
    void take() {
        if (credit <= 0 && revoked > 0) {
            revoked--;
            deliveryCount = SerialNumber.add(deliveryCount, 1);
            return;
        }
        if (credit <= 0) {
            throw AmqpException.linkError(handle, AmqpError.TRANSFER_LIMIT_EXCEEDED,
                "transfer with no link credit (delivery-count %d)", deliveryCount);
        }
        credit--;
        deliveryCount = SerialNumber.add(deliveryCount, 1);
    }

    /** {@link #take}, for a transfer that must also carry its delivery-id (one that is settled with it). */
    void firstTransfer(TransferPerformative transfer) {
        if ((credit > 0 || revoked > 0) && transfer.deliveryId() < 0) {
            throw AmqpException.sessionError(AmqpError.INVALID_FIELD, "first transfer of a delivery without delivery-id");
        }
        take();
    }
}
