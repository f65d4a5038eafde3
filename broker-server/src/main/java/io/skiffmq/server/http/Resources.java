package io.skiffmq.server.http;

import io.skiffmq.server.Broker;
import java.util.List;
import java.util.function.Supplier;
import tools.jackson.databind.ObjectMapper;

/** Fills the routing table with every resource family of the API. */
final class Resources {
    private Resources() {
    }

    static void register(Router router, Broker broker, ObjectMapper mapper, Supplier<List<Listener>> listeners,
            NodeApplication application, RateSampler rates) {
        Lookups lookups = new Lookups(broker);
        new NodeResources(lookups, listeners, rates, mapper).register(router);
        new ApplicationResources(application).register(router);
        new AlarmLimitResources(broker.resourceMonitor(), broker.alarms(), mapper).register(router);
        new HealthChecks(broker, listeners).register(router);
        ConnectionResources connections = new ConnectionResources(lookups, rates);
        connections.register(router);
        new StreamResources(lookups, connections).register(router);
        new ChannelResources(lookups).register(router);
        new QueueResources(lookups, mapper, rates).register(router);
        new ExchangeResources(lookups, mapper).register(router);
        new BindingResources(lookups, mapper).register(router);
        new SuperStreamResources(lookups, mapper).register(router);
        new AccessResources(lookups, mapper, rates).register(router);
        new ClusterResources(lookups, mapper).register(router);
        new QuorumReplicaResources(lookups, mapper).register(router);
        new DefinitionsResources(lookups, mapper).register(router);
        new PolicyResources(lookups, mapper).register(router);
        new GlobalParameterResources(lookups, mapper).register(router);
        new VhostLimitResources(lookups, mapper).register(router);
        new ParameterResources(lookups, mapper).register(router);
    }
}
