package io.skiffmq.codec.amqp091;

import io.netty.buffer.ByteBuf;

/**
 * Class {@code tx} (90): standard transactions.
 *
 * <p>Reserved arguments (the old {@code ticket}, {@code capabilities}, {@code insist}, {@code known-hosts},
 * {@code out-of-band}, {@code channel-id}, {@code cluster-id}) are read and dropped, and written as zero or
 * empty. Null strings, byte strings and tables are written empty. Immutable (tables are not copied).
 */
public sealed interface TxMethod extends Method {
    /** Class id {@value}. */
    int CLASS_ID = 90;

    @Override
    default int classId() {
        return CLASS_ID;
    }

    /** {@code tx.select} (90, 10). */
    record Select() implements TxMethod {
        public static final int METHOD_ID = 10;
        public static final Select INSTANCE = new Select();

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "tx.select";
        }

        @Override
        public void writeArguments(ByteBuf out) {
        }

        static Select read(ByteBuf in) throws Amqp091DecodeException {
            return INSTANCE;
        }
    }

    /** {@code tx.select-ok} (90, 11). */
    record SelectOk() implements TxMethod {
        public static final int METHOD_ID = 11;
        public static final SelectOk INSTANCE = new SelectOk();

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "tx.select-ok";
        }

        @Override
        public void writeArguments(ByteBuf out) {
        }

        static SelectOk read(ByteBuf in) throws Amqp091DecodeException {
            return INSTANCE;
        }
    }

    /** {@code tx.commit} (90, 20). */
    record Commit() implements TxMethod {
        public static final int METHOD_ID = 20;
        public static final Commit INSTANCE = new Commit();

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "tx.commit";
        }

        @Override
        public void writeArguments(ByteBuf out) {
        }

        static Commit read(ByteBuf in) throws Amqp091DecodeException {
            return INSTANCE;
        }
    }

    /** {@code tx.commit-ok} (90, 21). */
    record CommitOk() implements TxMethod {
        public static final int METHOD_ID = 21;
        public static final CommitOk INSTANCE = new CommitOk();

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "tx.commit-ok";
        }

        @Override
        public void writeArguments(ByteBuf out) {
        }

        static CommitOk read(ByteBuf in) throws Amqp091DecodeException {
            return INSTANCE;
        }
    }

    /** {@code tx.rollback} (90, 30). */
    record Rollback() implements TxMethod {
        public static final int METHOD_ID = 30;
        public static final Rollback INSTANCE = new Rollback();

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "tx.rollback";
        }

        @Override
        public void writeArguments(ByteBuf out) {
        }

        static Rollback read(ByteBuf in) throws Amqp091DecodeException {
            return INSTANCE;
        }
    }

    /** {@code tx.rollback-ok} (90, 31). */
    record RollbackOk() implements TxMethod {
        public static final int METHOD_ID = 31;
        public static final RollbackOk INSTANCE = new RollbackOk();

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "tx.rollback-ok";
        }

        @Override
        public void writeArguments(ByteBuf out) {
        }

        static RollbackOk read(ByteBuf in) throws Amqp091DecodeException {
            return INSTANCE;
        }
    }
}
