package io.skiffmq.core.filter;

/**
 * One token of a selector: its kind, its text (an identifier's name, a string literal's value with quotes undone,
 * a number's digits, a keyword upper-cased, an operator) and its 1-based position. Immutable.
 */
record Token(Kind kind, String text, int position) {
    enum Kind {
        IDENTIFIER, STRING, EXACT, APPROXIMATE, KEYWORD, OPERATOR, LEFT, RIGHT, COMMA, END
    }

    boolean is(Kind k, String t) {
        return kind == k && text.equals(t);
    }

    boolean isKeyword(String keyword) {
        return is(Kind.KEYWORD, keyword);
    }

    /** How the token reads in an error message. */
    String describe() {
        return switch (kind) {
            case END -> "the end of the selector";
            case STRING -> "string '" + text.replace("'", "''") + "'";
            default -> "'" + text + "'";
        };
    }
}
