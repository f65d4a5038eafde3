package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.testing.LeakDetection;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code /api/parameters}: RabbitMQ's runtime parameters over the virtual host limits and operator policies
 * SkiffMQ keeps, with RabbitMQ's answers for components it has none of, for policies (not settable this way) and
 * for users who are neither administrators nor policymakers in the virtual host.
 */
@ExtendWith(LeakDetection.class)
class HttpApiParametersTest {
    private static RunningBroker broker;
    private static HttpApiClient api;

    @BeforeAll
    static void setUp() throws Exception {
        broker = RunningBroker.start();
        api = HttpApiClient.guest(broker);
    }

    @AfterAll
    static void tearDown() {
        broker.close();
    }

    private static String reason(HttpApiClient.Answer answer) {
        return String.valueOf(answer.map().get("reason"));
    }

    @Test
    void vhostLimitsAreAParameterWhoseValueReplacesEveryLimit() throws Exception {
        broker.admin().createVhost("par-limits");
        String path = "/api/parameters/vhost-limits/par-limits/limits";
        assertThat(api.get(path).status()).isEqualTo(404);
        assertThat(api.put(path, Map.of("value", Map.of("max-connections", 10, "max-queues", 5))).status())
            .isEqualTo(201);
        assertThat(api.get(path).map()).isEqualTo(Map.of("vhost", "par-limits", "component", "vhost-limits",
            "name", "limits", "value", Map.of("max-connections", 10, "max-queues", 5)));
        assertThat(api.get("/api/vhost-limits/par-limits").list()).singleElement()
            .satisfies(l -> assertThat(l.get("value")).isEqualTo(Map.of("max-connections", 10, "max-queues", 5)));

        // the whole value is replaced, as rabbit_vhost_limit:set/3 replaces it: max-connections goes
        assertThat(api.put(path, Map.of("value", Map.of("max-queues", 3))).status()).isEqualTo(204);
        assertThat(broker.broker().accessControl().vhost("par-limits").maxConnections()).isEqualTo(-1);
        assertThat(broker.broker().accessControl().vhost("par-limits").maxQueues()).isEqualTo(3);
        assertThat(api.get("/api/parameters/vhost-limits/par-limits").list()).extracting(p -> p.get("value"))
            .containsExactly(Map.of("max-queues", 3));
        assertThat(api.get("/api/parameters/vhost-limits").list()).extracting(p -> p.get("vhost"))
            .contains("par-limits");
        assertThat(api.get("/api/parameters").list()).anySatisfy(p -> assertThat(p)
            .containsEntry("vhost", "par-limits").containsEntry("component", "vhost-limits"));

        HttpApiClient.Answer unknown = api.put(path, Map.of("value", Map.of("max-bananas", 1)));
        assertThat(unknown.status()).isEqualTo(400);
        assertThat(reason(unknown)).isEqualTo("Validation failed\n\nUnrecognised terms [{<<\"max-bananas\">>,1}] "
            + "in limits\n");
        HttpApiClient.Answer string = api.put(path, Map.of("value", Map.of("max-queues", "5")));
        assertThat(reason(string)).isEqualTo("Validation failed\n\nmax-queues should be a number, actually was "
            + "<<\"5\">>\n");
        assertThat(reason(api.put(path, Map.of()))).isEqualTo("[{key_missing,value}]");

        assertThat(api.delete(path).status()).isEqualTo(204);
        assertThat(api.get(path).status()).isEqualTo(404);
        assertThat(api.delete(path).status()).isEqualTo(404);
        assertThat(broker.broker().accessControl().vhost("par-limits").maxQueues()).isEqualTo(-1);
    }

    @Test
    void operatorPoliciesAreParametersAndApplyAsSetByTheOperatorPolicyApi() throws Exception {
        broker.admin().createVhost("par-op");
        broker.admin().setPermissions("guest", "par-op", ".*", ".*", ".*");
        String path = "/api/parameters/operator_policy/par-op/cap";
        Map<String, Object> value = Map.of("pattern", "^capped", "definition", Map.of("max-length", 7),
            "priority", 1, "apply-to", "queues");
        assertThat(api.put(path, Map.of("value", value)).status()).isEqualTo(201);
        assertThat(api.put(path, Map.of("value", value)).status()).isEqualTo(204);
        assertThat(api.get("/api/operator-policies/par-op/cap").map()).containsEntry("pattern", "^capped")
            .containsEntry("definition", Map.of("max-length", 7)).containsEntry("priority", 1)
            .containsEntry("apply-to", "queues");
        assertThat(api.get(path).map()).containsEntry("component", "operator_policy").containsEntry("value", value);
        // a queue takes it as it takes one set through /api/operator-policies
        assertThat(api.put("/api/queues/par-op/capped-q", Map.of("durable", false)).status()).isEqualTo(201);
        assertThat(api.get("/api/queues/par-op/capped-q").map()).containsEntry("operator_policy", "cap");

        HttpApiClient.Answer noPriority = api.put(path, Map.of("value", Map.of("pattern", "x", "definition",
            Map.of("max-length", 1))));
        assertThat(noPriority.status()).isEqualTo(400);
        assertThat(reason(noPriority)).isEqualTo("Validation failed\n\nKey \"priority\" not found in cap\n");
        HttpApiClient.Answer badKey = api.put(path, Map.of("value", Map.of("pattern", "x", "priority", 0,
            "definition", Map.of("alternate-exchange", "ae"))));
        assertThat(badKey.status()).isEqualTo(400);
        assertThat(reason(badKey)).startsWith("Validation failed\n\n").contains("alternate-exchange");

        assertThat(api.delete(path).status()).isEqualTo(204);
        assertThat(api.get("/api/operator-policies/par-op/cap").status()).isEqualTo(404);
        assertThat(api.get("/api/queues/par-op/capped-q").map().get("operator_policy")).isNotEqualTo("cap");
    }

    @Test
    void componentsSkiffmqHasNoneOfAreAnsweredAsRabbitmqAnswersUnknownOnes() throws Exception {
        HttpApiClient.Answer put = api.put("/api/parameters/shovel/%2F/move", Map.of("value",
            Map.of("src-queue", "a", "dest-queue", "b")));
        assertThat(put.status()).isEqualTo(400);
        assertThat(put.map()).containsEntry("error", "bad_request")
            .containsEntry("reason", "Validation failed\n\ncomponent shovel not found\n");
        assertThat(api.get("/api/parameters/shovel").list()).isEmpty();
        assertThat(api.get("/api/parameters/federation-upstream/%2F").list()).isEmpty();
        assertThat(api.get("/api/parameters/shovel/%2F/move").status()).isEqualTo(404);
        assertThat(api.delete("/api/parameters/shovel/%2F/move").status()).isEqualTo(404);

        assertThat(api.get("/api/parameters/vhost-limits/no-such-vhost").status()).isEqualTo(404);
        HttpApiClient.Answer noVhost = api.put("/api/parameters/vhost-limits/no-such-vhost/limits",
            Map.of("value", Map.of("max-queues", 1)));
        assertThat(noVhost.status()).isEqualTo(404);
        assertThat(reason(noVhost)).isEqualTo("vhost_not_found");
    }

    @Test
    void policiesShowByComponentButAreNeitherListedNorSetHere() throws Exception {
        broker.admin().createVhost("par-pol");
        assertThat(api.put("/api/policies/par-pol/p", Map.of("pattern", ".*", "definition",
            Map.of("max-length", 9))).status()).isEqualTo(201);
        assertThat(api.get("/api/parameters/policy/par-pol/p").map()).containsEntry("component", "policy")
            .containsEntry("value", Map.of("pattern", ".*", "definition", Map.of("max-length", 9), "priority", 0,
                "apply-to", "all"));
        assertThat(api.get("/api/parameters/policy/par-pol").list()).hasSize(1);
        assertThat(api.get("/api/parameters").list()).noneMatch(p -> "policy".equals(p.get("component")));
        HttpApiClient.Answer put = api.put("/api/parameters/policy/par-pol/p", Map.of("value",
            Map.of("pattern", ".*", "definition", Map.of("max-length", 1), "priority", 0)));
        assertThat(put.status()).isEqualTo(400);
        assertThat(reason(put)).isEqualTo("policies may not be set using this method");
        assertThat(api.get("/api/policies/par-pol/p").map()).containsEntry("definition", Map.of("max-length", 9));
    }

    @Test
    void policymakersManageTheParametersOfTheirVirtualHostsOnly() throws Exception {
        Admin admin = broker.admin();
        admin.createVhost("par-mine");
        admin.createVhost("par-theirs");
        admin.setVhostLimits("par-theirs", 4, -1);
        admin.putUser("par-pm", "pm-pw", List.of("policymaker"));
        admin.setPermissions("par-pm", "par-mine", ".*", ".*", ".*");
        admin.putUser("par-mgmt", "mgmt-pw", List.of("management"));
        admin.setPermissions("par-mgmt", "par-mine", ".*", ".*", ".*");
        HttpApiClient pm = new HttpApiClient(broker.managementPort(), "par-pm", "pm-pw");
        HttpApiClient mgmt = new HttpApiClient(broker.managementPort(), "par-mgmt", "mgmt-pw");

        assertThat(pm.put("/api/parameters/vhost-limits/par-mine/limits",
            Map.of("value", Map.of("max-queues", 2))).status()).isEqualTo(201);
        HttpApiClient.Answer theirs = pm.put("/api/parameters/vhost-limits/par-theirs/limits",
            Map.of("value", Map.of("max-queues", 2)));
        assertThat(theirs.status()).isEqualTo(401);
        assertThat(reason(theirs)).isEqualTo("User not authorised to access object");
        assertThat(pm.get("/api/parameters").list()).extracting(p -> p.get("vhost")).containsExactly("par-mine");
        assertThat(mgmt.get("/api/parameters").status()).isEqualTo(401);
        assertThat(mgmt.put("/api/parameters/vhost-limits/par-mine/limits",
            Map.of("value", Map.of("max-queues", 1))).status()).isEqualTo(401);
    }
}
