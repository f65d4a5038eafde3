package io.skiffmq.core.filter;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A recursive-descent parser for JMS 2.0 message selectors (3.8.1.1), lowest precedence first:
 *
 * <pre>
 * selector       := or END
 * or             := and (OR and)*
 * and            := not (AND not)*
 * not            := NOT not | predicate
 * predicate      := sum [ comparison-op sum | [NOT] BETWEEN sum AND sum | identifier [NOT] IN '(' string (, string)* ')'
 *                   | identifier [NOT] LIKE string [ESCAPE string] | IS [NOT] NULL ]
 * sum            := product ((+ | -) product)*
 * product        := unary ((* | /) unary)*
 * unary          := (+ | -) unary | primary
 * primary        := string | exact | approximate | TRUE | FALSE | NULL | identifier | '(' or ')'
 * </pre>
 *
 * <p>Types are checked where the parser can know them: AND, OR and NOT take conditions, arithmetic takes numbers,
 * strings and booleans are compared with {@code =} and {@code <>} only; identifiers may hold anything and are
 * checked when evaluated. Nesting is limited to {@link Selector#MAX_DEPTH} (parentheses, NOT and unary signs), so a
 * hostile selector cannot exhaust the stack. One parser per parse; not thread-safe.
 */
final class SelectorParser {
    private final List<Token> tokens;
    private int next;
    private int depth;

    private SelectorParser(List<Token> tokens) {
        this.tokens = tokens;
    }

    static Expression parse(String selector) {
        SelectorParser parser = new SelectorParser(SelectorLexer.tokens(selector));
        Token first = parser.peek();
        Expression e = parser.or();
        parser.expectCondition(e, first);
        Token end = parser.peek();
        if (end.kind() != Token.Kind.END) {
            throw new SelectorException(end.position(), "unexpected " + end.describe());
        }
        return e;
    }

    private Token peek() {
        return tokens.get(next);
    }

    private Token take() {
        Token t = tokens.get(next);
        if (t.kind() != Token.Kind.END) {
            next++;
        }
        return t;
    }

    private boolean acceptKeyword(String keyword) {
        if (peek().isKeyword(keyword)) {
            next++;
            return true;
        }
        return false;
    }

    private Token expect(Token.Kind kind, String what) {
        Token t = peek();
        if (t.kind() != kind) {
            throw new SelectorException(t.position(), "expected " + what + ", found " + t.describe());
        }
        return take();
    }

    private void enter(Token at) {
        if (++depth > Selector.MAX_DEPTH) {
            throw new SelectorException(at.position(), "nested deeper than " + Selector.MAX_DEPTH);
        }
    }

    private Expression or() {
        Token first = peek();
        Expression left = and();
        while (peek().isKeyword("OR")) {
            Token or = take();
            expectCondition(left, first);
            first = peek();
            Expression right = and();
            expectCondition(right, first);
            left = Logic.or(left, right);
            first = or;
        }
        return left;
    }

    private Expression and() {
        Token first = peek();
        Expression left = not();
        while (peek().isKeyword("AND")) {
            Token and = take();
            expectCondition(left, first);
            first = peek();
            Expression right = not();
            expectCondition(right, first);
            left = Logic.and(left, right);
            first = and;
        }
        return left;
    }

    private Expression not() {
        Token t = peek();
        if (!t.isKeyword("NOT")) {
            return predicate();
        }
        take();
        enter(t);
        Token operand = peek();
        Expression e = not();
        depth--;
        expectCondition(e, operand);
        return new Logic.Not(e);
    }

    private void expectCondition(Expression e, Token at) {
        if (e.type() != Expression.Type.BOOLEAN && e.type() != Expression.Type.ANY) {
            throw new SelectorException(at.position(), "expected a condition, found a " + typeName(e) + " at "
                + at.describe());
        }
    }

    private static String typeName(Expression e) {
        return e.type() == Expression.Type.NUMERIC ? "number" : "string";
    }

    private Expression predicate() {
        Token start = peek();
        Expression left = sum();
        Token t = peek();
        if (t.kind() == Token.Kind.OPERATOR) {
            Comparison.Operator op = Comparison.Operator.of(t.text());
            if (op == null) {
                throw new SelectorException(t.position(), "unexpected " + t.describe());
            }
            take();
            Token rightStart = peek();
            Expression right = sum();
            if (op != Comparison.Operator.EQ && op != Comparison.Operator.NE) {
                orderable(left, start, op);
                orderable(right, rightStart, op);
            }
            return new Comparison(op, left, right);
        }
        if (t.isKeyword("IS")) {
            take();
            boolean negated = acceptKeyword("NOT");
            Token nul = peek();
            if (!acceptKeyword("NULL")) {
                throw new SelectorException(nul.position(), "expected NULL, found " + nul.describe());
            }
            return new Predicates.IsNull(left, negated);
        }
        boolean negated = false;
        if (t.isKeyword("NOT")) {
            take();
            negated = true;
            t = peek();
            if (!t.isKeyword("BETWEEN") && !t.isKeyword("IN") && !t.isKeyword("LIKE")) {
                throw new SelectorException(t.position(), "expected BETWEEN, IN or LIKE after NOT, found "
                    + t.describe());
            }
        }
        if (acceptKeyword("BETWEEN")) {
            numeric(left, start);
            Token lowStart = peek();
            Expression low = sum();
            numeric(low, lowStart);
            Token and = peek();
            if (!acceptKeyword("AND")) {
                throw new SelectorException(and.position(), "expected AND in BETWEEN, found " + and.describe());
            }
            Token highStart = peek();
            Expression high = sum();
            numeric(high, highStart);
            return new Predicates.Between(left, low, high, negated);
        }
        if (acceptKeyword("IN")) {
            identifier(left, start, "IN");
            expect(Token.Kind.LEFT, "'(' after IN");
            Set<String> values = new HashSet<>();
            do {
                values.add(expect(Token.Kind.STRING, "a string literal in the IN list").text());
            } while (peek().kind() == Token.Kind.COMMA && take() != null);
            expect(Token.Kind.RIGHT, "')' or ',' in the IN list");
            return new Predicates.In(left, Set.copyOf(values), negated);
        }
        if (acceptKeyword("LIKE")) {
            identifier(left, start, "LIKE");
            Token pattern = expect(Token.Kind.STRING, "a string literal pattern after LIKE");
            Character escape = null;
            if (acceptKeyword("ESCAPE")) {
                Token e = expect(Token.Kind.STRING, "a string literal after ESCAPE");
                if (e.text().length() != 1) {
                    throw new SelectorException(e.position(), "ESCAPE takes one character, not " + e.describe());
                }
                escape = e.text().charAt(0);
            }
            return new Predicates.Like(left, pattern.text(), escape, pattern.position(), negated);
        }
        return left;
    }

    private static void orderable(Expression e, Token at, Comparison.Operator op) {
        if (e.type() == Expression.Type.STRING || e.type() == Expression.Type.BOOLEAN) {
            throw new SelectorException(at.position(), "'" + op.symbol + "' compares numbers only, not "
                + at.describe());
        }
    }

    private static void numeric(Expression e, Token at) {
        if (e.type() != Expression.Type.NUMERIC && e.type() != Expression.Type.ANY) {
            throw new SelectorException(at.position(), "expected a number, found " + at.describe());
        }
    }

    private static void identifier(Expression e, Token at, String operator) {
        if (!(e instanceof Expression.Identifier)) {
            throw new SelectorException(at.position(), operator + " needs an identifier on its left, not "
                + at.describe());
        }
    }

    private Expression sum() {
        Token start = peek();
        Expression left = product();
        while (peek().is(Token.Kind.OPERATOR, "+") || peek().is(Token.Kind.OPERATOR, "-")) {
            char op = take().text().charAt(0);
            numeric(left, start);
            Token rightStart = peek();
            Expression right = product();
            numeric(right, rightStart);
            left = new Arithmetic(op, left, right);
        }
        return left;
    }

    private Expression product() {
        Token start = peek();
        Expression left = unary();
        while (peek().is(Token.Kind.OPERATOR, "*") || peek().is(Token.Kind.OPERATOR, "/")) {
            char op = take().text().charAt(0);
            numeric(left, start);
            Token rightStart = peek();
            Expression right = unary();
            numeric(right, rightStart);
            left = new Arithmetic(op, left, right);
        }
        return left;
    }

    private Expression unary() {
        Token t = peek();
        boolean minus = t.is(Token.Kind.OPERATOR, "-");
        if (!minus && !t.is(Token.Kind.OPERATOR, "+")) {
            return primary();
        }
        take();
        Token operand = peek();
        if (minus && operand.kind() == Token.Kind.EXACT) {
            take(); // folded, so that -9223372036854775808 is a long
            String digits = operand.text();
            return new Expression.Literal(digits.startsWith("-") ? -exact(digits, operand) : exact("-" + digits, t));
        }
        enter(t);
        Expression e = unary();
        depth--;
        numeric(e, operand);
        return minus ? new Arithmetic.Negate(e) : e;
    }

    private Expression primary() {
        Token t = take();
        switch (t.kind()) {
            case STRING:
                return new Expression.Literal(t.text());
            case EXACT:
                return new Expression.Literal(exact(t.text(), t));
            case APPROXIMATE: {
                double d = Double.parseDouble(t.text());
                if (Double.isInfinite(d)) {
                    throw new SelectorException(t.position(), "number " + t.text() + " out of range");
                }
                return new Expression.Literal(d);
            }
            case IDENTIFIER:
                return new Expression.Identifier(t.text());
            case KEYWORD:
                switch (t.text()) {
                    case "TRUE":
                        return new Expression.Literal(Boolean.TRUE);
                    case "FALSE":
                        return new Expression.Literal(Boolean.FALSE);
                    case "NULL":
                        return new Expression.Literal(null);
                    default:
                        break;
                }
                break;
            case LEFT: {
                enter(t);
                Expression e = or();
                depth--;
                expect(Token.Kind.RIGHT, "')'");
                return e;
            }
            default:
                break;
        }
        throw new SelectorException(t.position(), "expected a value, found " + t.describe());
    }

    private static Long exact(String digits, Token at) {
        try {
            return Long.parseLong(digits);
        } catch (NumberFormatException e) {
            throw new SelectorException(at.position(), "number " + digits + " out of range of a long");
        }
    }
}
