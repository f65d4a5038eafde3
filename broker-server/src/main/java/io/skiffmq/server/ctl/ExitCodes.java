package io.skiffmq.server.ctl;

/**
 * rabbitmqctl's exit codes, which are those of BSD's {@code sysexits(3)} ({@code RabbitMQ.CLI.Core.ExitCodes}).
 * Constants only.
 */
public final class ExitCodes {
    /** Done. */
    public static final int OK = 0;
    /** The command line was wrong: an unknown command or option, too few or too many arguments, an unknown column. */
    public static final int USAGE = 64;
    /** An argument's value was wrong (a definitions file that is not JSON). */
    public static final int DATA_ERROR = 65;
    /** A user named in the command does not exist. */
    public static final int NOUSER = 67;
    /** The node could not be reached, or is stopping. */
    public static final int UNAVAILABLE = 69;
    /** The node refused the request: an HTTP error status, with the API's reason. */
    public static final int SOFTWARE = 70;
    /** A wait ran out ({@code await_startup --timeout}). */
    public static final int TEMPFAIL = 75;
    /** The configuration the node options default from could not be read. */
    public static final int CONFIG = 78;

    private ExitCodes() {
    }
}
