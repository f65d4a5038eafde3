package io.skiffmq.server.ctl;

import java.util.concurrent.Callable;
import picocli.CommandLine.ParentCommand;

/**
 * A {@code skiffmqctl} command: it reaches the node options, the output and the HTTP API through {@link #ctl}, and
 * returns its exit code ({@link ExitCodes}) or throws a {@link CtlException}. One instance per run, on one thread.
 */
abstract class CtlCommand implements Callable<Integer> {
    @ParentCommand
    SkiffmqCtl ctl;
}
