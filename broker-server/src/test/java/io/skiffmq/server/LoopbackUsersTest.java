package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import ch.qos.logback.classic.Level;
import com.rabbitmq.client.AuthenticationFailureException;
import com.rabbitmq.client.ConnectionFactory;
import io.skiffmq.codec.testing.LeakDetection;
import jakarta.jms.JMSSecurityException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Collections;
import org.apache.qpid.jms.JmsConnectionFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A loopback-only user ({@code loopback-users}, guest by default) with the right password, from an address that is
 * not loopback: refused on both protocols and the HTTP API, each saying that it is a loopback-only refusal, in
 * RabbitMQ's words, and logged so; the wrong password from there still gets the usual refusal, which says nothing.
 * The client connects to one of this machine's own non-loopback addresses, which the broker sees as its peer.
 */
@ExtendWith(LeakDetection.class)
class LoopbackUsersTest {
    private static final String GENERIC = "ACCESS_REFUSED - Login was refused using authentication mechanism PLAIN. "
        + "For details see the broker logfile.";

    @Test
    void guestFromAfarIsToldItMayConnectViaLocalhostOnly() throws Exception {
        InetAddress afar = nonLoopbackAddress();
        assumeTrue(afar != null, "this machine has no non-loopback IPv4 address to connect from");
        String host = afar.getHostAddress();
        try (LogCapture log = LogCapture.capture(); RunningBroker broker = RunningBroker.start("bind=0.0.0.0")) {
            ConnectionFactory factory = new ConnectionFactory();
            factory.setHost(host);
            factory.setPort(broker.port());
            factory.setAutomaticRecoveryEnabled(false);
            assertThatThrownBy(factory::newConnection).isInstanceOf(AuthenticationFailureException.class)
                .hasMessage("ACCESS_REFUSED - PLAIN login refused: user 'guest' can only connect via localhost");
            factory.setPassword("wrong");
            assertThatThrownBy(factory::newConnection).as("without the password, nothing is said")
                .isInstanceOf(AuthenticationFailureException.class).hasMessage(GENERIC);

            // AMQP 1.0, as RabbitMQ: SASL succeeds, and open is answered by a close saying why
            JmsConnectionFactory jms = new JmsConnectionFactory("guest", "guest", "amqp://" + host + ":"
                + broker.port());
            assertThatThrownBy(() -> jms.createConnection().start()).isInstanceOf(JMSSecurityException.class)
                .hasMessageContaining("user 'guest' can only connect via localhost")
                .hasMessageContaining("amqp:unauthorized-access");

            HttpResponse<String> http = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create("http://" + host + ":" + broker.managementPort() + "/api/overview"))
                .header("Authorization", "Basic " + Base64.getEncoder().encodeToString(
                    "guest:guest".getBytes(StandardCharsets.UTF_8))).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(http.statusCode()).isEqualTo(401);
            assertThat(http.body())
                .isEqualTo("{\"error\":\"not_authorised\",\"reason\":\"User can only log in via localhost\"}");

            String line = "PLAIN login refused: user 'guest' can only connect via localhost, not from " + host
                + " (setting loopback-users)";
            assertThat(log.lines(Level.WARN, l -> l.equals(line))).as("one line per refusal").hasSize(3);
            assertThat(log.lines(Level.WARN, l -> l.contains("login refused: user 'guest' from " + host
                + " - invalid credentials"))).as("the wrong password").hasSize(1);
        }
    }

    /** One of this machine's addresses that is not loopback (nor link-local), or null. */
    static InetAddress nonLoopbackAddress() throws SocketException {
        for (NetworkInterface nic : Collections.list(NetworkInterface.getNetworkInterfaces())) {
            if (!nic.isUp() || nic.isLoopback()) {
                continue;
            }
            for (InetAddress address : Collections.list(nic.getInetAddresses())) {
                if (address instanceof Inet4Address && !address.isLoopbackAddress() && !address.isLinkLocalAddress()) {
                    return address;
                }
            }
        }
        return null;
    }
}
