package io.skiffmq.server.http;

import io.skiffmq.server.authz.AccessControl;
import java.util.List;

/**
 * The authenticated user of a request and what its tags allow, as RabbitMQ's management plugin rules them:
 * {@code management} sees the virtual hosts it has permissions in; {@code policymaker} adds the policies of the
 * virtual hosts it has permissions in; {@code monitoring} reads everything (all virtual hosts, connections,
 * channels, nodes); {@code administrator} does everything, users and virtual hosts included. A user with none of
 * these tags may not use the API. Immutable.
 */
record Caller(String user, List<String> tags) {
    static final String ADMINISTRATOR = "administrator";
    static final String MONITORING = "monitoring";
    static final String POLICYMAKER = "policymaker";
    static final String MANAGEMENT = "management";

    boolean administrator() {
        return tags.contains(ADMINISTRATOR);
    }

    boolean monitoring() {
        return administrator() || tags.contains(MONITORING);
    }

    boolean management() {
        return monitoring() || tags.contains(POLICYMAKER) || tags.contains(MANAGEMENT);
    }

    /** May see the virtual host's resources: monitoring users see all, others those they have permissions in. */
    boolean sees(AccessControl access, String vhost) {
        return monitoring() || access.mayAccess(user, vhost);
    }

    /** RabbitMQ's 401 for a virtual host the user has no permissions in. */
    void requireVhost(AccessControl access, String vhost) {
        if (!sees(access, vhost) && !(administrator() && access.vhost(vhost) != null)) {
            throw ApiException.notAuthorised("User not authorised to access virtual host");
        }
    }

    /**
     * RabbitMQ's {@code is_authorized_policies}: administrators, and policymakers with permissions in
     * {@code vhost} (any virtual host when null).
     */
    void requirePolicymaker(AccessControl access, String vhost) {
        if (!administrator() && !(tags.contains(POLICYMAKER) && (vhost == null || access.mayAccess(user, vhost)))) {
            throw ApiException.notAuthorised("User not authorised to access object");
        }
    }

    void requireAdministrator() {
        if (!administrator()) {
            throw ApiException.notAuthorised("Not administrator user");
        }
    }

    void requireMonitoring() {
        if (!monitoring()) {
            throw ApiException.notAuthorised("Not monitor user");
        }
    }
}
