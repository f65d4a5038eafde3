package io.skiffmq.server.amqp10;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.skiffmq.codec.amqp10.AmqpError;
import io.skiffmq.codec.amqp10.FlowPerformative;
import io.skiffmq.codec.amqp10.MessageSections;
import io.skiffmq.codec.amqp10.TransferPerformative;
import org.apache.qpid.proton.amqp.messaging.AmqpValue;
import org.apache.qpid.proton.amqp.transport.Attach;
import org.apache.qpid.proton.amqp.transport.SenderSettleMode;
import org.apache.qpid.proton.message.Message;

/**
 * The receiving half of the {@code /management} link pair (RabbitMQ 4's HTTP over AMQP): each request names its
 * method in {@code subject} and its path in {@code to}; the answer goes to the {@link ManagementResponseLink} of the
 * same link name, correlated by the request's message-id. Owned by the connection's event loop.
 */
final class ManagementRequestLink implements Link {
    /** Requests may be pipelined up to this many; management traffic is light. */
    private static final int CREDIT = 100;
    private static final int MAX_REQUEST = 1 << 20;

    private final AmqpSession session;
    private final long handle;
    private final String name;
    private final ManagementNode node;
    private final ReceiverCredit credit;
    private ByteBuf assembling;
    private boolean closed;

    private ManagementRequestLink(AmqpSession session, long handle, String name, long deliveryCount) {
        this.session = session;
        this.handle = handle;
        this.name = name;
        this.node = new ManagementNode(session.vhost(), session.config().node(), session.owner(),
            session.connection().managementExecutor(),
            () -> session.connection().broker().accessControl().access(session.connection().user(),
                session.vhost().name()), session.connection().fromNode());
        this.credit = new ReceiverCredit(session, handle, deliveryCount, CREDIT);
    }

    static ManagementRequestLink attach(AmqpSession session, Attach attach) {
        long initial = attach.getInitialDeliveryCount() == null ? 0 : attach.getInitialDeliveryCount().longValue();
        ManagementRequestLink link = new ManagementRequestLink(session, attach.getHandle().longValue(), attach.getName(),
            initial);
        session.writeFrame(Link.reply(attach, SenderSettleMode.SETTLED));
        link.grant();
        return link;
    }

    private void grant() {
        if (credit.low()) {
            credit.grant();
        }
    }

    @Override
    public long handle() {
        return handle;
    }

    @Override
    public boolean isClosed() {
        return closed;
    }

    @Override
    public void onFlow(FlowPerformative flow) {
        if (flow.echo()) {
            credit.echo();
        }
    }

    void onTransfer(TransferPerformative transfer, ByteBuf payload) {
        if (assembling == null) {
            credit.take();
            assembling = payload.alloc().heapBuffer();
        }
        if (transfer.aborted()) {
            assembling.release();
            assembling = null;
            return;
        }
        if (assembling.readableBytes() + payload.readableBytes() > MAX_REQUEST) {
            assembling.release();
            assembling = null;
            throw AmqpException.linkError(handle, AmqpError.MESSAGE_SIZE_EXCEEDED, "management request over %d bytes",
                MAX_REQUEST);
        }
        assembling.writeBytes(payload);
        if (transfer.more()) {
            return;
        }
        byte[] bytes = ByteBufUtil.getBytes(assembling);
        assembling.release();
        assembling = null;
        handle(bytes);
        grant();
    }

    private void handle(byte[] bytes) {
        Message request = Message.Factory.create();
        try {
            // our own scanner first: proton-j's decoder is only handed well-formed sections
            MessageSections.scan(io.netty.buffer.Unpooled.wrappedBuffer(bytes));
            request.decode(bytes, 0, bytes.length);
        } catch (io.skiffmq.codec.amqp10.AmqpDecodeException | RuntimeException e) {
            throw AmqpException.linkError(handle, AmqpError.DECODE_ERROR, "management request: %s", e.getMessage());
        }
        Object id = request.getMessageId();
        Object body = request.getBody() instanceof AmqpValue value ? value.getValue() : null;
        node.handle(request.getSubject(), request.getAddress(), body).whenComplete((response, error) ->
            session.onLoop(() -> {
                Throwable cause = error instanceof java.util.concurrent.CompletionException && error.getCause() != null
                    ? error.getCause() : error;
                if (cause instanceof AmqpException refused) {
                    // a permission refused: RabbitMQ 4 ends the session, and sends no response
                    session.fail(refused);
                    return;
                }
                ManagementResponseLink responses = session.managementResponses(name);
                if (responses != null) {
                    responses.respond(id, error == null ? response
                        : ManagementNode.Response.error(500, "internal error: " + error));
                }
            }));
    }

    @Override
    public void close(boolean detachClosed) {
        closed = true;
        if (assembling != null) {
            assembling.release();
            assembling = null;
        }
    }
}
