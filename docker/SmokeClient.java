import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;

/**
 * docker/smoke's client, from outside the container, which docker/smoke compiles and runs (java -cp
 * skiffmq.jar:amqp-client.jar:CLASSES SmokeClient COMMAND ...): the RabbitMQ Java client for AMQP 0-9-1 and the JDK's
 * for HTTP. Prints what it got on stdout; exits 1 when it did not get what the command expects.
 *
 * <pre>
 *   publish amqp://user:pass@host:port QUEUE BODY   a persistent message to a durable queue, confirmed
 *   get     amqp://user:pass@host:port QUEUE        one message's body (none: exit 1)
 *   login   amqp://user:pass@host:port              connects and says so; a refusal prints its text, exit 1
 *   http    METHOD URL USER PASS [JSON]             the status and the body, one line
 * </pre>
 */
public final class SmokeClient {
    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "publish" -> {
                try (Connection connection = factory(args[1]).newConnection(); Channel channel =
                        connection.createChannel()) {
                    channel.queueDeclare(args[2], true, false, false, null);
                    channel.confirmSelect();
                    channel.basicPublish("", args[2], new AMQP.BasicProperties.Builder().deliveryMode(2).build(),
                        args[3].getBytes(StandardCharsets.UTF_8));
                    channel.waitForConfirmsOrDie(10_000);
                    System.out.println("published and confirmed");
                }
            }
            case "get" -> {
                try (Connection connection = factory(args[1]).newConnection(); Channel channel =
                        connection.createChannel()) {
                    GetResponse response = channel.basicGet(args[2], true);
                    if (response == null) {
                        System.out.println("no message in " + args[2]);
                        System.exit(1);
                    }
                    System.out.println(new String(response.getBody(), StandardCharsets.UTF_8));
                }
            }
            case "login" -> {
                try (Connection connection = factory(args[1]).newConnection()) {
                    System.out.println("logged in to " + connection.getServerProperties().get("product"));
                } catch (Exception e) {
                    System.out.println(e.getClass().getSimpleName() + ": " + e.getMessage());
                    System.exit(1);
                }
            }
            case "http" -> {
                HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(args[2]))
                    .timeout(Duration.ofSeconds(15)).header("Content-Type", "application/json")
                    .header("Authorization", "Basic " + Base64.getEncoder().encodeToString(
                        (args[3] + ":" + args[4]).getBytes(StandardCharsets.UTF_8)))
                    .method(args[1], args.length > 5 ? HttpRequest.BodyPublishers.ofString(args[5])
                        : HttpRequest.BodyPublishers.noBody());
                HttpResponse<String> response = HttpClient.newHttpClient().send(request.build(),
                    HttpResponse.BodyHandlers.ofString());
                System.out.println(response.statusCode() + " " + response.body());
            }
            default -> throw new IllegalArgumentException("unknown command " + args[0]);
        }
    }

    private static ConnectionFactory factory(String uri) throws Exception {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setUri(uri);
        factory.setAutomaticRecoveryEnabled(false);
        factory.setConnectionTimeout(10_000);
        return factory;
    }
}
