package io.skiffmq.server.ctl;

import io.skiffmq.server.config.BrokerConfig;
import io.skiffmq.server.config.ConfigLoader;
import io.skiffmq.server.http.ManagementSettings;
import java.io.InputStream;
import java.io.PrintWriter;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;

/**
 * {@code skiffmqctl}: a client of the broker's HTTP API in the style of {@code rabbitmqctl} (same command names,
 * arguments, columns, output and exit codes where SkiffMQ has the feature; docs/cli.md). The node options below
 * may come before or after the command. The port defaults to the {@code management-port} setting read from the
 * broker's own sources ({@code skiffmq.conf}, {@code SKIFFMQ_MANAGEMENT_PORT}, {@code -Dskiffmq.management-port}),
 * the host to the {@code bind} setting when that is not a wildcard. One instance per run, on one thread.
 */
@Command(name = "skiffmqctl", mixinStandardHelpOptions = true, versionProvider = SkiffmqCtl.Version.class,
    description = "Manages a SkiffMQ node through its HTTP API (management-port), as rabbitmqctl does RabbitMQ.",
    subcommands = {ListCommands.ListQueues.class, ListCommands.ListExchanges.class, ListCommands.ListBindings.class,
        ListCommands.ListConnections.class, ListCommands.ListChannels.class, ListCommands.ListConsumers.class,
        QueueCommands.DeleteQueue.class, QueueCommands.PurgeQueue.class, QueueCommands.QuorumStatus.class,
        QueueCommands.AddMember.class, QueueCommands.DeleteMember.class, QueueCommands.Grow.class,
        QueueCommands.Shrink.class, QueueCommands.Rebalance.class, ConnectionCommands.CloseConnection.class,
        ConnectionCommands.CloseAllConnections.class, UserCommands.AddUser.class, UserCommands.DeleteUser.class,
        UserCommands.ChangePassword.class, UserCommands.SetUserTags.class, UserCommands.ListUsers.class,
        VhostCommands.AddVhost.class, VhostCommands.DeleteVhost.class, VhostCommands.ListVhosts.class,
        VhostCommands.EnableDeletionProtection.class, VhostCommands.DisableDeletionProtection.class,
        PermissionCommands.SetPermissions.class, PermissionCommands.ClearPermissions.class,
        PermissionCommands.ListPermissions.class, PermissionCommands.ListUserPermissions.class,
        PermissionCommands.SetTopicPermissions.class, PermissionCommands.ClearTopicPermissions.class,
        PermissionCommands.ListTopicPermissions.class, PermissionCommands.ListUserTopicPermissions.class,
        DefinitionsCommands.Export.class, DefinitionsCommands.Import.class, NodeCommands.Status.class,
        NodeCommands.AwaitStartup.class, NodeCommands.StopApp.class, NodeCommands.StartApp.class,
        NodeCommands.Eval.class, AlarmCommands.SetMemoryHighWatermark.class, AlarmCommands.SetDiskFreeLimit.class,
        ClusterCommands.Status.class, ClusterCommands.SetName.class,
        ClusterCommands.Join.class, ClusterCommands.Forget.class, ClusterCommands.AwaitOnline.class,
        SuperStreamCommands.Add.class, SuperStreamCommands.Delete.class,
        StreamCommands.Status.class, StreamCommands.ListConnections.class, StreamCommands.ListConsumers.class,
        StreamCommands.ListPublishers.class, StreamCommands.ListGroupConsumers.class,
        PolicyCommands.SetUserPolicy.class, PolicyCommands.ClearUserPolicy.class,
        PolicyCommands.ListUserPolicies.class, PolicyCommands.SetOperatorPolicy.class,
        PolicyCommands.ClearOperatorPolicy.class, PolicyCommands.ListOperatorPolicies.class},
    footer = {"", "Exit codes: 0 ok, 64 usage, 65 bad data, 67 no such user, 69 node unavailable or stopping, 70"
        + " refused by the node (HTTP error), 75 timed out, 78 unreadable settings."})
public final class SkiffmqCtl implements Callable<Integer> {
    private static final String WILDCARD_V4 = "0.0.0.0";

    @Option(names = "--host", scope = ScopeType.INHERIT, paramLabel = "HOST",
        description = "the node's host (default: the bind setting, or 127.0.0.1 when that is a wildcard)")
    String host;

    @Option(names = "--port", scope = ScopeType.INHERIT, paramLabel = "PORT",
        description = "the HTTP API's port (default: the management-port setting, 15672)")
    Integer port;

    @Option(names = {"-u", "--username"}, scope = ScopeType.INHERIT, defaultValue = "guest",
        description = "user of the HTTP API (default: ${DEFAULT-VALUE})")
    String username;

    @Option(names = "--password", scope = ScopeType.INHERIT, defaultValue = "guest",
        description = "its password (default: ${DEFAULT-VALUE})")
    String password;

    @Option(names = {"-p", "--vhost"}, scope = ScopeType.INHERIT, defaultValue = "/", paramLabel = "VHOST",
        description = "the virtual host of commands that act in one (default: /)")
    String vhost;

    @Option(names = {"-q", "--quiet"}, scope = ScopeType.INHERIT,
        description = "no informational messages")
    boolean quiet;

    @Option(names = {"-s", "--silent"}, scope = ScopeType.INHERIT,
        description = "no informational messages and no table headers")
    boolean silent;

    @Option(names = "--no-table-headers", scope = ScopeType.INHERIT, description = "no table headers")
    boolean noTableHeaders;

    @Option(names = "--formatter", scope = ScopeType.INHERIT, defaultValue = "table", paramLabel = "table|json",
        description = "output: tab-separated with a header line (default), or JSON")
    Formatter formatter;

    /** How lists and the status are printed. */
    enum Formatter { table, json }

    private final InputStream in;
    private final PrintWriter out;
    private final PrintWriter err;
    private final Map<String, String> environment;
    private BrokerConfig settings;

    SkiffmqCtl(InputStream in, PrintWriter out, PrintWriter err, Map<String, String> environment) {
        this.in = in;
        this.out = out;
        this.err = err;
        this.environment = environment;
    }

    public static void main(String[] args) {
        PrintWriter out = new PrintWriter(System.out, true);
        PrintWriter err = new PrintWriter(System.err, true);
        int code = run(args, System.in, out, err, System.getenv());
        out.flush();
        err.flush();
        System.exit(code);
    }

    /**
     * Runs one command line; returns its exit code ({@link ExitCodes}). Public for tests that run it in-process.
     *
     * @param in what {@code import_definitions -} reads
     * @param environment where {@code SKIFFMQ_*} settings are read from ({@code System.getenv()})
     */
    public static int run(String[] args, InputStream in, PrintWriter out, PrintWriter err,
            Map<String, String> environment) {
        CommandLine commandLine = new CommandLine(new SkiffmqCtl(in, out, err, environment))
            .setOut(out).setErr(err)
            .setCaseInsensitiveEnumValuesAllowed(true)
            .setParameterExceptionHandler((e, given) -> {
                err.println("Error: " + e.getMessage());
                e.getCommandLine().usage(err);
                return ExitCodes.USAGE;
            })
            .setExecutionExceptionHandler((e, command, parsed) -> {
                if (e instanceof CtlException failed) {
                    err.println("Error: " + failed.getMessage());
                    if (failed.exitCode() == ExitCodes.USAGE) {
                        command.usage(err);
                    }
                    return failed.exitCode();
                }
                throw e;
            });
        String unknown = UnknownCommand.in(commandLine, args);
        int code = unknown != null ? UnknownCommand.report(commandLine, unknown, err) : commandLine.execute(args);
        out.flush();
        err.flush();
        return code;
    }

    /** No command: the usage, as a usage error. */
    @Override
    public Integer call() {
        err.println("Error: a command is needed");
        new CommandLine(this).usage(err);
        return ExitCodes.USAGE;
    }

    /** Standard input ({@code import_definitions -}). */
    InputStream in() {
        return in;
    }

    PrintWriter out() {
        return out;
    }

    /** Informational messages ("Listing queues for vhost / ..."), unless quiet or silent or printing JSON. */
    void info(String message) {
        if (!quiet && !silent && formatter != Formatter.json) {
            out.println(message);
        }
    }

    boolean tableHeaders() {
        return !silent && !noTableHeaders;
    }

    boolean json() {
        return formatter == Formatter.json;
    }

    /** A client of the node's HTTP API, at the options' address. */
    ApiClient api() {
        return new ApiClient(host(), port(), username, password);
    }

    private String host() {
        if (host != null) {
            return host;
        }
        if (port != null && !settingsReadable()) {
            // the port was given: the host need not come from settings the node may not even share
            return "127.0.0.1";
        }
        String bind = settings().bindAddress();
        return bind.equals(WILDCARD_V4) || bind.equals("::") || bind.equals("[::]") ? "127.0.0.1" : bind;
    }

    private int port() {
        if (port != null) {
            return port;
        }
        int configured = settings().management().port();
        if (configured == ManagementSettings.NO_PORT) {
            throw new CtlException(ExitCodes.CONFIG, "management-port is none in the node's settings: it has no HTTP"
                + " API (give --port if it runs with other settings)");
        }
        if (configured == 0) {
            throw new CtlException(ExitCodes.CONFIG, "management-port is 0 (a free port) in the node's settings:"
                + " give --port");
        }
        return configured;
    }

    private boolean settingsReadable() {
        try {
            settings();
            return true;
        } catch (CtlException e) {
            return false;
        }
    }

    /** The broker's settings from its defaults, config file, environment and system properties (no command line). */
    private BrokerConfig settings() {
        if (settings == null) {
            try {
                settings = ConfigLoader.load(new String[0], environment, System.getProperties(),
                    ConfigLoader.DEFAULT_FILES).config();
            } catch (IllegalArgumentException e) {
                throw new CtlException(ExitCodes.CONFIG, "cannot read the node's settings (give --host and --port): "
                    + e.getMessage());
            }
        }
        return settings;
    }

    /** {@code --version}: SkiffMQ's. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[] {"skiffmqctl " + BrokerConfig.SKIFFMQ_VERSION};
        }
    }
}
