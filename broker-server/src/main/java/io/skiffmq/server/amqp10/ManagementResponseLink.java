package io.skiffmq.server.amqp10;

import io.netty.buffer.Unpooled;
import io.skiffmq.codec.amqp10.FlowPerformative;
import io.skiffmq.codec.amqp10.SerialNumber;
import java.util.ArrayDeque;
import java.util.Map;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.messaging.AmqpValue;
import org.apache.qpid.proton.amqp.messaging.ApplicationProperties;
import org.apache.qpid.proton.amqp.messaging.Properties;
import org.apache.qpid.proton.amqp.transport.Attach;
import org.apache.qpid.proton.amqp.transport.SenderSettleMode;
import org.apache.qpid.proton.message.Message;

/**
 * The sending half of the {@code /management} link pair: responses to the requests of the paired
 * {@link ManagementRequestLink}, pre-settled, within the credit the client grants. Owned by the connection's
 * event loop.
 */
final class ManagementResponseLink implements Link {
    private final AmqpSession session;
    private final long handle;
    private final ArrayDeque<byte[]> pending = new ArrayDeque<>();
    private long deliveryCount;
    private long credit;
    private boolean closed;

    private ManagementResponseLink(AmqpSession session, long handle) {
        this.session = session;
        this.handle = handle;
    }

    static ManagementResponseLink attach(AmqpSession session, Attach attach) {
        ManagementResponseLink link = new ManagementResponseLink(session, attach.getHandle().longValue());
        Attach reply = Link.reply(attach, SenderSettleMode.SETTLED);
        reply.setInitialDeliveryCount(UnsignedInteger.ZERO);
        session.writeFrame(reply);
        return link;
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
        long receiverCount = flow.deliveryCount() < 0 ? 0 : flow.deliveryCount();
        credit = Math.max(0, SerialNumber.diff(SerialNumber.add(receiverCount, Math.max(0, flow.linkCredit())),
            deliveryCount));
        pump();
    }

    /** Queues the response to request {@code requestId}; it goes out when there is credit. */
    void respond(Object requestId, ManagementNode.Response response) {
        Message message = Message.Factory.create();
        Properties properties = new Properties();
        properties.setCorrelationId(requestId);
        properties.setSubject(Integer.toString(response.status()));
        message.setProperties(properties);
        message.setApplicationProperties(new ApplicationProperties(Map.of("http:response", "1.1")));
        message.setBody(new AmqpValue(response.body()));
        byte[] buffer = new byte[4096];
        int length;
        while (true) {
            try {
                length = message.encode(buffer, 0, buffer.length);
                break;
            } catch (java.nio.BufferOverflowException e) {
                buffer = new byte[buffer.length * 4];
            }
        }
        pending.add(java.util.Arrays.copyOf(buffer, length));
        pump();
    }

    private void pump() {
        while (!closed && credit > 0 && !pending.isEmpty()) {
            session.sendSettled(this, Unpooled.wrappedBuffer(pending.poll()));
            credit--;
            deliveryCount = SerialNumber.add(deliveryCount, 1);
        }
    }

    @Override
    public void close(boolean detachClosed) {
        closed = true;
        pending.clear();
    }

}
