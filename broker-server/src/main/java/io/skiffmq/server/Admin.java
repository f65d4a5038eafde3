package io.skiffmq.server;

import io.skiffmq.core.BrokerException;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.server.auth.AuthSettings;
import io.skiffmq.server.auth.PasswordHash;
import io.skiffmq.server.auth.UserStore;
import io.skiffmq.server.authz.AccessControl;
import io.skiffmq.server.connection.ClientConnection;
import io.skiffmq.core.definitions.BrokerDefinitions;
import io.skiffmq.core.definitions.BrokerDefinitions.PermissionDefinition;
import io.skiffmq.core.definitions.BrokerDefinitions.TopicPermissionDefinition;
import io.skiffmq.core.definitions.BrokerDefinitions.UserDefinition;
import io.skiffmq.core.definitions.BrokerDefinitions.VhostDefinition;
import io.skiffmq.core.definitions.DefinitionChange.BrokerChange;
import io.skiffmq.core.definitions.DefinitionChange.InVhost;
import io.skiffmq.core.definitions.DefinitionChange.VhostChange;
import io.skiffmq.core.definitions.DefinitionChange.PermissionCleared;
import io.skiffmq.core.definitions.DefinitionChange.PermissionSet;
import io.skiffmq.core.definitions.DefinitionChange.TopicPermissionCleared;
import io.skiffmq.core.definitions.DefinitionChange.TopicPermissionSet;
import io.skiffmq.core.definitions.DefinitionChange.UserDeleted;
import io.skiffmq.core.definitions.DefinitionChange.UserPut;
import io.skiffmq.core.definitions.DefinitionChange.VhostAdded;
import io.skiffmq.core.definitions.DefinitionChange.VhostDeleted;
import io.skiffmq.core.definitions.DefinitionChange.VhostLimitsSet;
import io.skiffmq.core.definitions.DefinitionChange.VhostMetadataSet;
import io.skiffmq.core.definitions.DefinitionChange.GlobalParameterCleared;
import io.skiffmq.core.definitions.DefinitionChange.GlobalParameterSet;
import io.skiffmq.core.queue.QueueType;
import io.skiffmq.server.peer.PeerLinks;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * Administration without restart: virtual hosts, users with tags, permissions, topic permissions and limits, as
 * RabbitMQ's {@code rabbitmqctl} and HTTP API have them (RabbitMQ 4's {@code /management} AMQP node has no
 * operation for these; the HTTP API of issue 15 calls this). Every change is durable before it returns
 * ({@link AccessControl#update}; in a cluster, committed by a majority and applied on this node) and applies to open connections at their next operation; deleting a virtual host
 * or a user closes its connections first (320 CONNECTION_FORCED / {@code amqp:connection:forced}).
 *
 * <p>Thread-safe; changes are serialised on {@code this}. They wait for the disk and for connections to close:
 * call them from a management or administration thread, never an event loop. In a cluster their effects
 * ({@link #applied}, {@link #replaceAll}) run on the metadata log's applier thread instead, one at a time and
 * without that lock, whose holder waits for them.
 */
public final class Admin {
    private static final System.Logger LOG = System.getLogger(Admin.class.getName());
    private static final String ALL = ".*";

    private final Broker broker;
    private final VirtualHosts vhosts;
    private final AccessControl access;
    private final UserStore users;
    /** True in a cluster: changes take effect through the metadata log's applier ({@link #applied}). */
    private final boolean replicated;

    Admin(Broker broker, VirtualHosts vhosts, AccessControl access, UserStore users, boolean replicated) {
        this.broker = broker;
        this.replicated = replicated;
        this.vhosts = vhosts;
        this.access = access;
        this.users = users;
    }

    /**
     * The definitions of a first start: the virtual host {@code /}; every user the store holds (the
     * {@code default-user}, guest unless set, tagged {@code administrator} as in RabbitMQ, and the users file's)
     * with all permissions on {@code /}.
     */
    static BrokerDefinitions firstStart(UserStore users, String defaultUser) {
        List<UserDefinition> seeded = new ArrayList<>();
        List<PermissionDefinition> permissions = new ArrayList<>();
        for (Map.Entry<String, PasswordHash> user : users.storedHashes().entrySet()) {
            List<String> tags = user.getKey().equals(defaultUser) ? List.of("administrator") : List.of();
            PasswordHash hash = user.getValue();
            seeded.add(new UserDefinition(user.getKey(), hash.value(), hash.algorithm().moduleName(), tags, -1, -1));
            permissions.add(new PermissionDefinition(user.getKey(), "/", ALL, ALL, ALL));
        }
        return new BrokerDefinitions(List.of(new VhostDefinition("/", -1, -1)), seeded, permissions, List.of());
    }

    /** Makes the user store hold exactly the definitions' users, for password checks. */
    static void loadUsers(UserStore users, BrokerDefinitions definitions) {
        List<String> names = new ArrayList<>();
        for (UserDefinition user : definitions.users()) {
            users.add(user.name(), hashOf(user.passwordHash(), user.hashingAlgorithm()));
            names.add(user.name());
        }
        for (String name : users.storedHashes().keySet()) {
            if (!names.contains(name)) {
                users.remove(name);
            }
        }
    }

    /**
     * After a start that was not the first: when the {@code default-user} and {@code default-pass} settings are set
     * (not guest's) but not in force, says once that they apply to a first start only, as RabbitMQ's
     * {@code default_user} does, so that a changed {@code SKIFFMQ_DEFAULT_PASS} on an old volume is not a mystery.
     */
    static void noteDefaultUserNotApplied(UserStore users, AuthSettings.DefaultUser defaultUser) {
        if (defaultUser.equals(AuthSettings.DefaultUser.GUEST)) {
            return;
        }
        String why = !users.exists(defaultUser.name()) ? "there is no user '" + defaultUser.name() + "'"
            : !users.passwordMatches(defaultUser.name(), defaultUser.password())
                ? "user '" + defaultUser.name() + "' has another password" : null;
        if (why != null) {
            LOG.log(System.Logger.Level.INFO, "default-user and default-pass apply to a first start only, and this"
                + " data directory has its users already: " + why);
        }
    }

    /** Everything: for an export, or to list vhosts, users and permissions. */
    public BrokerDefinitions definitions() {
        return access.definitions();
    }

    /** Names of the virtual hosts. */
    public List<String> vhosts() {
        return access.definitions().vhosts().stream().map(VhostDefinition::name).toList();
    }

    /** Creates a virtual host, empty; does nothing when it exists. */
    public synchronized void createVhost(String name) {
        if (name == null || name.isEmpty()) {
            throw new IllegalArgumentException("a virtual host needs a name");
        }
        if (access.vhost(name) != null) {
            return;
        }
        change(new VhostAdded(new VhostDefinition(name, -1, -1)));
    }

    /**
     * Deletes a virtual host: closes its connections, forgets its permissions, and removes its exchanges, queues,
     * bindings and their messages from memory and disk.
     *
     * @return false when there was none
     */
    public synchronized boolean deleteVhost(String name) {
        VhostDefinition vhost = access.vhost(name);
        if (vhost == null) {
            return false;
        }
        if (vhost.protectedFromDeletion()) {
            // rabbit_vhost:delete/2's refusal, worded as rabbit_mgmt_wm_vhost words it
            throw new BrokerException(BrokerException.Kind.PRECONDITION_FAILED, "Refusing to delete virtual host '"
                + name + "' because it is protected from deletion");
        }
        change(new VhostDeleted(name)); // its permissions go with it
        return true;
    }

    /**
     * Sets a virtual host's description, tags and default queue type ({@code classic}, {@code quorum},
     * {@code stream}, or null for none), RabbitMQ's metadata; does nothing when they are those already.
     *
     * @throws IllegalArgumentException for another default queue type
     */
    public synchronized void setVhostMetadata(String name, String description, List<String> tags,
            String defaultQueueType) {
        VhostDefinition vhost = require(access.vhost(name), "virtual host", name);
        if (defaultQueueType != null && QueueType.ofAlias(defaultQueueType) == null) {
            throw new IllegalArgumentException("default queue type '" + defaultQueueType
                + "' is not one of classic, quorum, stream");
        }
        if (!vhost.description().equals(description == null ? "" : description) || !vhost.tags().equals(tags)
                || !java.util.Objects.equals(vhost.defaultQueueType(), defaultQueueType)) {
            change(new VhostMetadataSet(name, description, tags, defaultQueueType, vhost.protectedFromDeletion()));
        }
    }

    /**
     * Protects a virtual host from deletion, or lifts the protection: RabbitMQ 4.1's
     * {@code protected_from_deletion} metadata. Does nothing when it is so already.
     *
     * @throws IllegalArgumentException when there is no such virtual host
     */
    public synchronized void setVhostProtection(String name, boolean protectedFromDeletion) {
        VhostDefinition vhost = require(access.vhost(name), "virtual host", name);
        if (vhost.protectedFromDeletion() != protectedFromDeletion) {
            change(new VhostMetadataSet(name, vhost.description(), vhost.tags(), vhost.defaultQueueType(),
                protectedFromDeletion));
        }
    }

    /** Sets a global parameter: its value as JSON text, kept and exported, used by nothing. */
    public synchronized void setGlobalParameter(String name, String json) {
        if (name == null || name.isEmpty()) {
            throw new IllegalArgumentException("a global parameter needs a name");
        }
        change(new GlobalParameterSet(new BrokerDefinitions.GlobalParameterDefinition(name, json)));
    }

    /** @return false when there was none */
    public synchronized boolean clearGlobalParameter(String name) {
        if (access.definitions().globalParameters().stream().noneMatch(g -> g.name().equals(name))) {
            return false;
        }
        change(new GlobalParameterCleared(name));
        return true;
    }

    /** Sets a virtual host's {@code max-connections} and {@code max-queues} (-1: none). */
    public synchronized void setVhostLimits(String name, long maxConnections, long maxQueues) {
        require(access.vhost(name), "virtual host", name);
        change(new VhostLimitsSet(name, maxConnections, maxQueues));
    }

    /** Adds or replaces a user with a password, hashed as RabbitMQ hashes by default (salted SHA-256). */
    public void putUser(String name, String password, List<String> tags) {
        PasswordHash hash = PasswordHash.of(password);
        putUser(name, hash.value(), hash.algorithm().moduleName(), tags);
    }

    /**
     * RabbitMQ's {@code password_hash} and {@code hashing_algorithm} as a hash the user store verifies.
     *
     * @throws IllegalArgumentException for an algorithm we do not verify
     */
    private static PasswordHash hashOf(String passwordHash, String hashingAlgorithm) {
        PasswordHash.Algorithm algorithm = PasswordHash.Algorithm.named(hashingAlgorithm);
        if (algorithm == null) {
            throw new IllegalArgumentException("unknown hashing_algorithm '" + hashingAlgorithm
                + "': rabbit_password_hashing_sha256, rabbit_password_hashing_sha512 or rabbit_password_hashing_md5");
        }
        return new PasswordHash(algorithm, passwordHash);
    }

    /**
     * Adds or replaces a user with a stored hash (RabbitMQ's {@code password_hash} and {@code hashing_algorithm},
     * kept as given); its limits and permissions stay when it existed. Tags are kept as given: RabbitMQ's
     * {@code administrator}, {@code management}, {@code monitoring}, {@code policymaker} and any other.
     */
    public synchronized void putUser(String name, String passwordHash, String hashingAlgorithm, List<String> tags) {
        if (name == null || name.isEmpty()) {
            throw new IllegalArgumentException("a user needs a name");
        }
        if (name.equals(PeerLinks.NODE_USER)) {
            // the unrestricted user of the other nodes' connections: nobody may log in as it with a password
            throw new IllegalArgumentException("user name '" + name + "' is reserved for the cluster's nodes");
        }
        hashOf(passwordHash, hashingAlgorithm); // refused here, before anything changes
        UserDefinition old = access.user(name);
        UserDefinition user = new UserDefinition(name, passwordHash, hashingAlgorithm, tags,
            old == null ? -1 : old.maxConnections(), old == null ? -1 : old.maxChannels());
        change(new UserPut(user));
    }

    /** Deletes a user, its permissions and its connections; false when there was none. */
    public synchronized boolean deleteUser(String name) {
        if (access.user(name) == null) {
            return false;
        }
        change(new UserDeleted(name)); // its permissions go with it
        return true;
    }

    /** Sets a user's {@code max-connections} and {@code max-channels} (channels or sessions; -1: none). */
    public synchronized void setUserLimits(String name, long maxConnections, long maxChannels) {
        UserDefinition old = require(access.user(name), "user", name);
        UserDefinition user = new UserDefinition(name, old.passwordHash(), old.hashingAlgorithm(), old.tags(),
            maxConnections, maxChannels);
        change(new UserPut(user));
    }

    /**
     * Sets a user's configure, write and read regular expressions in a virtual host (RabbitMQ's set_permissions).
     *
     * @throws IllegalArgumentException when one does not compile (nothing changes)
     */
    public synchronized void setPermissions(String user, String vhost, String configure, String write, String read) {
        require(access.user(user), "user", user);
        require(access.vhost(vhost), "virtual host", vhost);
        PermissionDefinition p = new PermissionDefinition(user, vhost, configure, write, read);
        change(new PermissionSet(p));
    }

    /** Takes a user's permissions in a virtual host away: it can no longer open connections there. */
    public synchronized void clearPermissions(String user, String vhost) {
        change(new PermissionCleared(user, vhost));
    }

    /**
     * Sets a user's topic permissions for one exchange of a virtual host (RabbitMQ's set_topic_permissions);
     * {@code {username}} and {@code {vhost}} in them stand for the user's and the virtual host's names.
     *
     * @throws IllegalArgumentException when one does not compile (nothing changes)
     */
    public synchronized void setTopicPermissions(String user, String vhost, String exchange, String write,
            String read) {
        require(access.user(user), "user", user);
        require(access.vhost(vhost), "virtual host", vhost);
        TopicPermissionDefinition p = new TopicPermissionDefinition(user, vhost, exchange, write, read);
        change(new TopicPermissionSet(p));
    }

    /** Takes all of a user's topic permissions in a virtual host away. */
    public synchronized void clearTopicPermissions(String user, String vhost) {
        clearTopicPermissions(user, vhost, null);
    }

    /** Takes a user's topic permissions for one exchange of a virtual host away; all of them when it is null. */
    public synchronized void clearTopicPermissions(String user, String vhost, String exchange) {
        change(new TopicPermissionCleared(user, vhost, exchange));
    }

    /**
     * Makes {@code change} durable and puts it in force: on a single node, here, with its effects; in a cluster,
     * the metadata log's applier does that on every node ({@link #applied}) before the append completes.
     */
    private void change(BrokerChange change) {
        access.update(change);
        if (!replicated) {
            applied(change);
        }
    }

    /**
     * What a change does beyond the definitions in force: the virtual host objects, the user store that checks
     * passwords, and the connections of a deleted virtual host or user. Called once the change is durable: in a
     * cluster on the metadata log's applier thread, on every node, after {@link AccessControl#applied}.
     */
    void applied(BrokerChange change) {
        if (change instanceof InVhost in) {
            VirtualHost vhost = vhosts.get(in.vhost());
            if (vhost != null) {
                vhost.applyShared(in.change());
            }
        } else if (change instanceof VhostAdded a) {
            VirtualHost vhost;
            if (replicated) {
                // the log may replay an entry this node applied before it restarted: keep what the directory holds
                vhost = vhosts.open(a.vhost().name(), a.vhost().maxQueues());
            } else {
                vhost = vhosts.create(a.vhost().name());
            }
            vhost.defaultQueueType(QueueType.ofAlias(a.vhost().defaultQueueType()));
        } else if (change instanceof VhostMetadataSet m) {
            VirtualHost vhost = vhosts.get(m.name());
            if (vhost != null) {
                vhost.defaultQueueType(QueueType.ofAlias(m.defaultQueueType()));
            }
        } else if (change instanceof VhostDeleted d) {
            closeConnections(c -> c.opened() != null && d.name().equals(c.opened().vhost()),
                "virtual host '" + d.name() + "' is deleted");
            vhosts.delete(d.name());
            broker.counters().forgetVhost(d.name());
        } else if (change instanceof VhostLimitsSet l) {
            VirtualHost vhost = vhosts.get(l.name());
            if (vhost != null) {
                vhost.maxQueues(l.maxQueues());
            }
        } else if (change instanceof UserPut p) {
            users.add(p.user().name(), hashOf(p.user().passwordHash(), p.user().hashingAlgorithm()));
        } else if (change instanceof UserDeleted d) {
            users.remove(d.name());
            closeConnections(c -> c.opened() != null && d.name().equals(c.opened().user()),
                "user '" + d.name() + "' is deleted");
        }
    }

    /**
     * In a cluster: every definition replaced by {@code definitions} (at start, and when a snapshot is installed),
     * on the metadata log's applier thread: the policy, the user store, and the virtual hosts (opened, recovering
     * what their directories hold, or deleted).
     */
    void replaceAll(BrokerDefinitions definitions, Map<String, List<VhostChange>> shared) {
        access.replaceAll(definitions);
        loadUsers(users, definitions);
        List<String> names = new ArrayList<>();
        for (VhostDefinition definition : definitions.vhosts()) {
            List<VhostChange> itsShared = shared.getOrDefault(definition.name(), List.of());
            boolean opened = vhosts.get(definition.name()) != null;
            VirtualHost vhost = vhosts.open(definition.name(), definition.maxQueues(), itsShared);
            vhost.maxQueues(definition.maxQueues());
            vhost.defaultQueueType(QueueType.ofAlias(definition.defaultQueueType()));
            if (opened) {
                vhost.replaceShared(itsShared);
            }
            names.add(definition.name());
        }
        for (VirtualHost vhost : List.copyOf(vhosts.all())) {
            if (!names.contains(vhost.name())) {
                applied(new VhostDeleted(vhost.name()));
            }
        }
    }

    /**
     * Closes the connections {@code which} selects and waits (up to 10 s) until each has let go of its channels,
     * consumers and exclusive queues: a 0-9-1 client has 3 s to answer {@code close-ok}.
     */
    private void closeConnections(Predicate<ClientConnection> which, String why) {
        List<CompletableFuture<Void>> gone = new ArrayList<>();
        for (ClientConnection connection : broker.connections()) {
            if (which.test(connection)) {
                try {
                    connection.closeForced(why);
                } catch (java.util.concurrent.RejectedExecutionException e) {
                    // its event loop has stopped: the connection is gone with it
                }
                gone.add(broker.whenUnregistered(connection));
            }
        }
        try {
            CompletableFuture.allOf(gone.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            LOG.log(System.Logger.Level.WARNING, "connections did not close in time: " + why, e);
        }
    }

    private static <T> T require(T found, String kind, String name) {
        if (found == null) {
            throw new IllegalArgumentException("no " + kind + " '" + name + "'");
        }
        return found;
    }
}
