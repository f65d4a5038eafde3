package io.skiffmq.core.filter;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Cuts a selector into {@link Token}s (JMS 2.0, 3.8.1.1): string literals in single quotes ({@code ''} for a quote),
 * exact numerics (digits), approximate numerics (a decimal point or an exponent: {@code 7.}, {@code .5},
 * {@code 57.9E2}; Java's hexadecimal, octal and suffixed forms too), identifiers (Java identifier characters,
 * case-sensitive), keywords (case-insensitive), the
 * operators {@code = <> < <= > >= + - * /}, parentheses and commas. Stateless; safe from any thread.
 */
final class SelectorLexer {
    /** Words that are never identifiers (3.8.1.1: NULL, TRUE, FALSE, NOT, AND, OR, BETWEEN, LIKE, IN, IS, ESCAPE). */
    static final Set<String> KEYWORDS = Set.of("NULL", "TRUE", "FALSE", "NOT", "AND", "OR", "BETWEEN", "LIKE", "IN",
        "IS", "ESCAPE");

    private SelectorLexer() {
    }

    static List<Token> tokens(String selector) {
        List<Token> tokens = new ArrayList<>();
        int i = 0;
        int n = selector.length();
        while (i < n) {
            char c = selector.charAt(i);
            int position = i + 1;
            if (Character.isWhitespace(c)) {
                i++;
            } else if (c == '\'') {
                StringBuilder value = new StringBuilder();
                i++;
                while (true) {
                    if (i >= n) {
                        throw new SelectorException(position, "string literal not closed");
                    }
                    char s = selector.charAt(i++);
                    if (s == '\'') {
                        if (i < n && selector.charAt(i) == '\'') {
                            value.append('\'');
                            i++;
                        } else {
                            break;
                        }
                    } else {
                        value.append(s);
                    }
                }
                tokens.add(new Token(Token.Kind.STRING, value.toString(), position));
            } else if (isDigit(c) || c == '.' && i + 1 < n && isDigit(selector.charAt(i + 1))) {
                i = number(selector, i, tokens);
            } else if (Character.isJavaIdentifierStart(c)) {
                int start = i;
                while (i < n && Character.isJavaIdentifierPart(selector.charAt(i))) {
                    i++;
                }
                String word = selector.substring(start, i);
                String upper = word.toUpperCase(Locale.ROOT);
                tokens.add(KEYWORDS.contains(upper) ? new Token(Token.Kind.KEYWORD, upper, position)
                    : new Token(Token.Kind.IDENTIFIER, word, position));
            } else if (c == '(') {
                tokens.add(new Token(Token.Kind.LEFT, "(", position));
                i++;
            } else if (c == ')') {
                tokens.add(new Token(Token.Kind.RIGHT, ")", position));
                i++;
            } else if (c == ',') {
                tokens.add(new Token(Token.Kind.COMMA, ",", position));
                i++;
            } else if (c == '<' || c == '>') {
                String op = String.valueOf(c);
                i++;
                if (i < n && (selector.charAt(i) == '=' || c == '<' && selector.charAt(i) == '>')) {
                    op += selector.charAt(i++);
                }
                tokens.add(new Token(Token.Kind.OPERATOR, op, position));
            } else if (c == '=' || c == '+' || c == '-' || c == '*' || c == '/') {
                tokens.add(new Token(Token.Kind.OPERATOR, String.valueOf(c), position));
                i++;
            } else {
                throw new SelectorException(position, "unexpected character '" + c + "'");
            }
        }
        tokens.add(new Token(Token.Kind.END, "", n + 1));
        return tokens;
    }

    private static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }

    /**
     * Reads a number starting at {@code i}, in Java's literal syntax as JMS asks (3.8.1.1): decimal, hexadecimal
     * ({@code 0x1F}) or octal ({@code 017}) integers with an optional {@code L}, and floating-point numbers with an
     * optional {@code F} or {@code D}. An exact number's token holds its value in decimal (a decimal one as written,
     * so that its range is checked where its sign is known); returns where it ends.
     */
    private static int number(String s, int i, List<Token> tokens) {
        int start = i;
        int n = s.length();
        if (s.charAt(i) == '0' && i + 1 < n && (s.charAt(i + 1) == 'x' || s.charAt(i + 1) == 'X')) {
            i += 2;
            while (i < n && Character.digit(s.charAt(i), 16) >= 0) {
                i++;
            }
            return radix(s, start, start + 2, i, 16, tokens);
        }
        boolean approximate = false;
        while (i < n && isDigit(s.charAt(i))) {
            i++;
        }
        if (i < n && s.charAt(i) == '.') {
            approximate = true;
            i++;
            while (i < n && isDigit(s.charAt(i))) {
                i++;
            }
        }
        if (i < n && (s.charAt(i) == 'e' || s.charAt(i) == 'E')) {
            int e = i + 1;
            if (e < n && (s.charAt(e) == '+' || s.charAt(e) == '-')) {
                e++;
            }
            if (e >= n || !isDigit(s.charAt(e))) {
                throw new SelectorException(start + 1, "exponent without digits in '" + s.substring(start, e) + "'");
            }
            while (e < n && isDigit(s.charAt(e))) {
                e++;
            }
            approximate = true;
            i = e;
        }
        char suffix = i < n ? Character.toUpperCase(s.charAt(i)) : 0;
        if (suffix == 'F' || suffix == 'D') {
            tokens.add(new Token(Token.Kind.APPROXIMATE, s.substring(start, i), start + 1));
            return i + 1;
        }
        if (approximate) {
            tokens.add(new Token(Token.Kind.APPROXIMATE, s.substring(start, i), start + 1));
            return i;
        }
        if (s.charAt(start) == '0' && i - start > 1) {
            return radix(s, start, start + 1, i, 8, tokens);
        }
        tokens.add(new Token(Token.Kind.EXACT, s.substring(start, i), start + 1));
        return suffix == 'L' ? i + 1 : i;
    }

    /** A hexadecimal or octal integer: its digits are {@code [from, to)}; 64 bits at most, as Java's literals. */
    private static int radix(String s, int start, int from, int to, int radix, List<Token> tokens) {
        String digits = s.substring(from, to);
        long value;
        try {
            value = Long.parseUnsignedLong(digits, radix);
        } catch (NumberFormatException e) {
            throw new SelectorException(start + 1, "invalid " + (radix == 16 ? "hexadecimal" : "octal") + " number '"
                + s.substring(start, to) + "'");
        }
        tokens.add(new Token(Token.Kind.EXACT, Long.toString(value), start + 1));
        return to < s.length() && Character.toUpperCase(s.charAt(to)) == 'L' ? to + 1 : to;
    }
}
