package io.skiffmq.server.http;

import io.skiffmq.core.definitions.BrokerDefinitions.VhostDefinition;
import io.skiffmq.core.queue.QueueType;
import io.skiffmq.server.Admin;
import java.util.List;
import java.util.Map;

/**
 * A virtual host's description, tags and default queue type (null: none) as RabbitMQ's {@code put_vhost} reads
 * them from a body: {@code description} and {@code tags} (a list or a comma-separated string) replace what was
 * there; {@code default_queue_type} (3.11's {@code defaultqueuetype} too; {@code "undefined"} for none) is kept
 * when absent. A definitions export has them in {@code metadata}; the top-level fields win. Immutable.
 */
record VhostMetadata(String description, List<String> tags, String defaultQueueType) {

    /**
     * @param before the virtual host as it is, or null when it is new
     * @throws ApiException 400 for a default queue type that is not classic, quorum or stream
     */
    static VhostMetadata of(Map<String, Object> body, Map<?, ?> metadata, VhostDefinition before) {
        Object description = body.containsKey("description") ? body.get("description") : metadata.get("description");
        Object tags = body.containsKey("tags") ? body.get("tags") : metadata.get("tags");
        Object type = body.containsKey("default_queue_type") ? body.get("default_queue_type")
            : body.containsKey("defaultqueuetype") ? body.get("defaultqueuetype") : metadata.get("default_queue_type");
        String defaultQueueType;
        if (type == null) {
            defaultQueueType = before == null ? null : before.defaultQueueType();
        } else if (type.equals("undefined")) {
            defaultQueueType = null;
        } else if (QueueType.ofAlias(type.toString()) != null) {
            defaultQueueType = type.toString();
        } else {
            throw ApiException.badRequest("invalid default queue type '" + type + "': not classic, quorum or stream");
        }
        return new VhostMetadata(description == null ? "" : description.toString(), AccessResources.tags(tags),
            defaultQueueType);
    }

    void set(Admin admin, String vhost) {
        admin.setVhostMetadata(vhost, description, tags, defaultQueueType);
    }
}
