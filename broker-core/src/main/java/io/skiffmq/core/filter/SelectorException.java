package io.skiffmq.core.filter;

/**
 * A selector that is not one: what is wrong, and where (the 1-based position of the character where the problem
 * starts, as JMS clients and Artemis report it). Its message reads {@code "position 12: expected ')', found 'AND'"}.
 * Immutable.
 */
public final class SelectorException extends IllegalArgumentException {
    private final int position;

    SelectorException(int position, String problem) {
        super("position " + position + ": " + problem);
        this.position = position;
    }

    /** 1-based: the first character of the selector is at position 1. */
    public int position() {
        return position;
    }
}
