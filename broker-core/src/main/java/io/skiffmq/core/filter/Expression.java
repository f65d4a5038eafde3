package io.skiffmq.core.filter;

import io.skiffmq.core.message.Message;

/**
 * A node of a parsed selector. Evaluating one against a message gives {@code Boolean.TRUE}/{@code FALSE}, a number
 * ({@code Long} for exact numerics, {@code Double} for approximate ones; properties may also give {@code Integer},
 * {@code Short}, {@code Byte}, {@code Float}), a {@code String}, or null: NULL, and for a condition "unknown"
 * (JMS 2.0, 3.8.1.2: three-valued logic). Immutable; safe from any thread.
 */
abstract class Expression {
    /** What a node gives, as far as the parser can tell: properties may hold anything ({@link #ANY}). */
    enum Type {
        BOOLEAN, NUMERIC, STRING, ANY
    }

    abstract Type type();

    abstract Object evaluate(Message message);

    /** True for an integer value (exact numeric), as opposed to an approximate one. */
    static boolean isExact(Object value) {
        return value instanceof Long || value instanceof Integer || value instanceof Short || value instanceof Byte;
    }

    static Boolean bool(boolean b) {
        return b ? Boolean.TRUE : Boolean.FALSE;
    }

    /** A node that gives TRUE, FALSE or unknown (null): a comparison, a predicate, a logical operator. */
    abstract static class Condition extends Expression {
        @Override
        final Type type() {
            return Type.BOOLEAN;
        }
    }

    /** A literal: a string, a number, TRUE, FALSE or NULL. */
    static final class Literal extends Expression {
        final Object value;

        Literal(Object value) {
            this.value = value;
        }

        @Override
        Type type() {
            if (value instanceof Boolean) {
                return Type.BOOLEAN;
            }
            if (value instanceof String) {
                return Type.STRING;
            }
            return value == null ? Type.ANY : Type.NUMERIC;
        }

        @Override
        Object evaluate(Message message) {
            return value;
        }
    }

    /** An identifier: a JMS header field or a message property, resolved to its kind once, at parse time. */
    static final class Identifier extends Expression {
        final String name;
        final MessageFields.Field field;

        Identifier(String name) {
            this.name = name;
            this.field = MessageFields.Field.of(name);
        }

        @Override
        Type type() {
            return Type.ANY;
        }

        @Override
        Object evaluate(Message message) {
            return MessageFields.value(message, field, name);
        }
    }
}
