package io.skiffmq.server.ctl;

/** A command failed: the exit code ({@link ExitCodes}) and what to tell the user. Immutable. */
final class CtlException extends RuntimeException {
    private final int exitCode;

    CtlException(int exitCode, String message) {
        super(message, null, false, false);
        this.exitCode = exitCode;
    }

    int exitCode() {
        return exitCode;
    }
}
