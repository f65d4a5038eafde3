package io.skiffmq.core.filter;

import io.skiffmq.core.message.Message;

/**
 * AND, OR and NOT with JMS 2.0's three-valued logic (3.8.1.2, tables 3-5 to 3-7): unknown (null) AND false is false,
 * unknown OR true is true, NOT unknown is unknown. A value that is not a boolean (a property holding a number, say)
 * counts as unknown. Immutable.
 */
final class Logic {
    private Logic() {
    }

    /** TRUE, FALSE or null (unknown) for any value. */
    static Boolean truth(Object value) {
        return value instanceof Boolean b ? b : null;
    }

    static final class And extends Expression {
        private final Expression left;
        private final Expression right;

        And(Expression left, Expression right) {
            this.left = left;
            this.right = right;
        }

        @Override
        Type type() {
            return Type.BOOLEAN;
        }

        @Override
        Object evaluate(Message message) {
            Boolean l = truth(left.evaluate(message));
            if (l == Boolean.FALSE) {
                return Boolean.FALSE;
            }
            Boolean r = truth(right.evaluate(message));
            if (r == Boolean.FALSE) {
                return Boolean.FALSE;
            }
            return l == null || r == null ? null : Boolean.TRUE;
        }
    }

    static final class Or extends Expression {
        private final Expression left;
        private final Expression right;

        Or(Expression left, Expression right) {
            this.left = left;
            this.right = right;
        }

        @Override
        Type type() {
            return Type.BOOLEAN;
        }

        @Override
        Object evaluate(Message message) {
            Boolean l = truth(left.evaluate(message));
            if (l == Boolean.TRUE) {
                return Boolean.TRUE;
            }
            Boolean r = truth(right.evaluate(message));
            if (r == Boolean.TRUE) {
                return Boolean.TRUE;
            }
            return l == null || r == null ? null : Boolean.FALSE;
        }
    }

    static final class Not extends Expression {
        private final Expression operand;

        Not(Expression operand) {
            this.operand = operand;
        }

        @Override
        Type type() {
            return Type.BOOLEAN;
        }

        @Override
        Object evaluate(Message message) {
            Boolean b = truth(operand.evaluate(message));
            return b == null ? null : bool(!b);
        }
    }
}
