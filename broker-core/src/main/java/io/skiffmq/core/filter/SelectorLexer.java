package io.skiffmq.core.filter;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Cuts a selector into {@link Token}s (JMS 2.0, 3.8.1.1): string literals in single quotes ({@code ''} for a quote),
 * exact numerics (digits), approximate numerics (a decimal point or an exponent: {@code 7.}, {@code .5},
 * {@code 57.9E2}), identifiers (Java identifier characters, case-sensitive), keywords (case-insensitive), the
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

    /** Reads a number starting at {@code i}; returns where it ends. */
    private static int number(String s, int i, List<Token> tokens) {
        int start = i;
        int n = s.length();
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
        tokens.add(new Token(approximate ? Token.Kind.APPROXIMATE : Token.Kind.EXACT, s.substring(start, i),
            start + 1));
        return i;
    }
}
