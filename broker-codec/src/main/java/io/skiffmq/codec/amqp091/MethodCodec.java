package io.skiffmq.codec.amqp091;

import io.netty.buffer.ByteBuf;

/**
 * Method frame payloads [4.2.4] to {@link Method} records and back: class id, method id, then the arguments,
 * with consecutive bit arguments packed into one octet (first bit in the lowest bit) [4.2.5.2]. Every method
 * of classes connection, channel, exchange, queue, basic, confirm and tx, with RabbitMQ's extensions. Stateless;
 * safe from any thread.
 */
public final class MethodCodec {
    private MethodCodec() {
    }

    /**
     * Decodes the readable bytes of {@code payload} (a method frame's payload: class id, method id, arguments),
     * moving its reader index to the end. Does not retain or release it.
     *
     * @throws Amqp091DecodeException {@link DecodeFailure#UNKNOWN_METHOD} for a class or method id not listed
     *         in {@link Method}'s subtypes, {@link DecodeFailure#BAD_ARGUMENTS} when the arguments are cut short or
     *         bytes are left after them, {@link DecodeFailure#BAD_VALUE} for a table that does not parse
     */
    public static Method decode(ByteBuf payload) throws Amqp091DecodeException {
        if (payload.readableBytes() < 4) {
            throw Amqp091DecodeException.of(DecodeFailure.MALFORMED_FRAME, "method frame of %d bytes",
                payload.readableBytes());
        }
        int classId = payload.readUnsignedShort();
        int methodId = payload.readUnsignedShort();
        Method method = read(classId, methodId, payload);
        if (payload.isReadable()) {
            throw Amqp091DecodeException.of(DecodeFailure.BAD_ARGUMENTS, "%d bytes after the arguments of %d/%d",
                payload.readableBytes(), classId, methodId);
        }
        return method;
    }

    /**
     * As {@link #decode(ByteBuf)}, but a {@code basic.publish} with the same arguments as {@code last} (a publisher
     * usually sends to one exchange with one routing key) is {@code last} itself, compared in place: no record and no
     * strings per message. Records are immutable, so handing the same one out again is safe.
     *
     * @param last the channel's previous {@code basic.publish}, or null
     */
    public static Method decode(ByteBuf payload, BasicMethod.Publish last) throws Amqp091DecodeException {
        if (last != null && payload.readableBytes() >= 4
                && payload.getInt(payload.readerIndex()) == (BasicMethod.CLASS_ID << 16 | BasicMethod.Publish.METHOD_ID)
                && last.sameArguments(payload, payload.readerIndex() + 4)) {
            payload.readerIndex(payload.writerIndex());
            return last;
        }
        return decode(payload);
    }

    private static Method read(int classId, int methodId, ByteBuf in) throws Amqp091DecodeException {
        return switch ((classId << 16) | methodId) {
            case 0x003c_000a -> BasicMethod.Qos.read(in); // basic.qos
            case 0x003c_000b -> BasicMethod.QosOk.read(in); // basic.qos-ok
            case 0x003c_0014 -> BasicMethod.Consume.read(in); // basic.consume
            case 0x003c_0015 -> BasicMethod.ConsumeOk.read(in); // basic.consume-ok
            case 0x003c_001e -> BasicMethod.Cancel.read(in); // basic.cancel
            case 0x003c_001f -> BasicMethod.CancelOk.read(in); // basic.cancel-ok
            case 0x003c_0028 -> BasicMethod.Publish.read(in); // basic.publish
            case 0x003c_0032 -> BasicMethod.Return.read(in); // basic.return
            case 0x003c_003c -> BasicMethod.Deliver.read(in); // basic.deliver
            case 0x003c_0046 -> BasicMethod.Get.read(in); // basic.get
            case 0x003c_0047 -> BasicMethod.GetOk.read(in); // basic.get-ok
            case 0x003c_0048 -> BasicMethod.GetEmpty.read(in); // basic.get-empty
            case 0x003c_0050 -> BasicMethod.Ack.read(in); // basic.ack
            case 0x003c_005a -> BasicMethod.Reject.read(in); // basic.reject
            case 0x003c_0064 -> BasicMethod.RecoverAsync.read(in); // basic.recover-async
            case 0x003c_006e -> BasicMethod.Recover.read(in); // basic.recover
            case 0x003c_006f -> BasicMethod.RecoverOk.read(in); // basic.recover-ok
            case 0x003c_0078 -> BasicMethod.Nack.read(in); // basic.nack
            case 0x000a_000a -> ConnectionMethod.Start.read(in); // connection.start
            case 0x000a_000b -> ConnectionMethod.StartOk.read(in); // connection.start-ok
            case 0x000a_0014 -> ConnectionMethod.Secure.read(in); // connection.secure
            case 0x000a_0015 -> ConnectionMethod.SecureOk.read(in); // connection.secure-ok
            case 0x000a_001e -> ConnectionMethod.Tune.read(in); // connection.tune
            case 0x000a_001f -> ConnectionMethod.TuneOk.read(in); // connection.tune-ok
            case 0x000a_0028 -> ConnectionMethod.Open.read(in); // connection.open
            case 0x000a_0029 -> ConnectionMethod.OpenOk.read(in); // connection.open-ok
            case 0x000a_0032 -> ConnectionMethod.Close.read(in); // connection.close
            case 0x000a_0033 -> ConnectionMethod.CloseOk.read(in); // connection.close-ok
            case 0x000a_003c -> ConnectionMethod.Blocked.read(in); // connection.blocked
            case 0x000a_003d -> ConnectionMethod.Unblocked.read(in); // connection.unblocked
            case 0x000a_0046 -> ConnectionMethod.UpdateSecret.read(in); // connection.update-secret
            case 0x000a_0047 -> ConnectionMethod.UpdateSecretOk.read(in); // connection.update-secret-ok
            case 0x0014_000a -> ChannelMethod.Open.read(in); // channel.open
            case 0x0014_000b -> ChannelMethod.OpenOk.read(in); // channel.open-ok
            case 0x0014_0014 -> ChannelMethod.Flow.read(in); // channel.flow
            case 0x0014_0015 -> ChannelMethod.FlowOk.read(in); // channel.flow-ok
            case 0x0014_0028 -> ChannelMethod.Close.read(in); // channel.close
            case 0x0014_0029 -> ChannelMethod.CloseOk.read(in); // channel.close-ok
            case 0x0028_000a -> ExchangeMethod.Declare.read(in); // exchange.declare
            case 0x0028_000b -> ExchangeMethod.DeclareOk.read(in); // exchange.declare-ok
            case 0x0028_0014 -> ExchangeMethod.Delete.read(in); // exchange.delete
            case 0x0028_0015 -> ExchangeMethod.DeleteOk.read(in); // exchange.delete-ok
            case 0x0028_001e -> ExchangeMethod.Bind.read(in); // exchange.bind
            case 0x0028_001f -> ExchangeMethod.BindOk.read(in); // exchange.bind-ok
            case 0x0028_0028 -> ExchangeMethod.Unbind.read(in); // exchange.unbind
            case 0x0028_0033 -> ExchangeMethod.UnbindOk.read(in); // exchange.unbind-ok
            case 0x0032_000a -> QueueMethod.Declare.read(in); // queue.declare
            case 0x0032_000b -> QueueMethod.DeclareOk.read(in); // queue.declare-ok
            case 0x0032_0014 -> QueueMethod.Bind.read(in); // queue.bind
            case 0x0032_0015 -> QueueMethod.BindOk.read(in); // queue.bind-ok
            case 0x0032_001e -> QueueMethod.Purge.read(in); // queue.purge
            case 0x0032_001f -> QueueMethod.PurgeOk.read(in); // queue.purge-ok
            case 0x0032_0028 -> QueueMethod.Delete.read(in); // queue.delete
            case 0x0032_0029 -> QueueMethod.DeleteOk.read(in); // queue.delete-ok
            case 0x0032_0032 -> QueueMethod.Unbind.read(in); // queue.unbind
            case 0x0032_0033 -> QueueMethod.UnbindOk.read(in); // queue.unbind-ok
            case 0x005a_000a -> TxMethod.Select.read(in); // tx.select
            case 0x005a_000b -> TxMethod.SelectOk.read(in); // tx.select-ok
            case 0x005a_0014 -> TxMethod.Commit.read(in); // tx.commit
            case 0x005a_0015 -> TxMethod.CommitOk.read(in); // tx.commit-ok
            case 0x005a_001e -> TxMethod.Rollback.read(in); // tx.rollback
            case 0x005a_001f -> TxMethod.RollbackOk.read(in); // tx.rollback-ok
            case 0x0055_000a -> ConfirmMethod.Select.read(in); // confirm.select
            case 0x0055_000b -> ConfirmMethod.SelectOk.read(in); // confirm.select-ok
            default -> throw Amqp091DecodeException.of(DecodeFailure.UNKNOWN_METHOD, "unknown method %d/%d",
                classId, methodId);
        };
    }

    /** Appends class id, method id and arguments at {@code out}'s writer index (see {@link Method#writeArguments}). */
    public static void encode(Method method, ByteBuf out) {
        out.writeShort(method.classId());
        out.writeShort(method.methodId());
        method.writeArguments(out);
    }
}
