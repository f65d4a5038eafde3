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

    static Expression and(Expression left, Expression right) {
        return new Junction(left, right, Boolean.FALSE);
    }

    static Expression or(Expression left, Expression right) {
        return new Junction(left, right, Boolean.TRUE);
    }

    /**
     * AND ({@code decisive} FALSE) or OR ({@code decisive} TRUE): either side giving the decisive value decides;
     * otherwise unknown if either side is, else the other value.
     */
    static final class Junction extends Expression.Condition {
        private final Expression left;
        private final Expression right;
        private final Boolean decisive;

        private Junction(Expression left, Expression right, Boolean decisive) {
            this.left = left;
            this.right = right;
            this.decisive = decisive;
        }

        @Override
        Object evaluate(Message message) {
            Boolean l = truth(left.evaluate(message));
            if (decisive.equals(l)) {
                return decisive;
            }
            Boolean r = truth(right.evaluate(message));
            if (decisive.equals(r)) {
                return decisive;
            }
            return l == null || r == null ? null : bool(!decisive);
        }
    }

    static final class Not extends Expression.Condition {
        private final Expression operand;

        Not(Expression operand) {
            this.operand = operand;
        }

        @Override
        Object evaluate(Message message) {
            Boolean b = truth(operand.evaluate(message));
            return b == null ? null : bool(!b);
        }
    }
}
