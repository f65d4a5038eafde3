package io.skiffmq.server.amqp10;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.skiffmq.codec.amqp10.AmqpFrame;
import io.skiffmq.codec.amqp10.PerformativeCodec;
import io.skiffmq.core.queue.QueueExecutor;
import io.skiffmq.server.auth.Credentials;
import io.skiffmq.server.auth.LoginResult;
import io.skiffmq.server.auth.PeerAddress;
import io.skiffmq.server.auth.PeerCertificate;
import io.skiffmq.server.auth.SaslAuthenticator;
import java.security.cert.X509Certificate;
import java.util.function.Consumer;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.security.SaslCode;
import org.apache.qpid.proton.amqp.security.SaslInit;
import org.apache.qpid.proton.amqp.security.SaslMechanisms;
import org.apache.qpid.proton.amqp.security.SaslOutcome;

/**
 * A connection's SASL exchange [5.3]: the mechanisms it offers (EXTERNAL only with a verified client
 * certificate), and {@code sasl-init}, whose credentials are read on the loop and checked off it
 * ({@link SaslAuthenticator#login}) while the connection's reads are held ({@link HeldReads}); the result comes back
 * on the loop, then what was held goes on. The connection decides what the result means for its state. Owned by the
 * connection's event loop.
 */
final class SaslExchange {
    private final SaslAuthenticator sasl;
    private final ChannelHandlerContext ctx;
    private final QueueExecutor loop;
    private final HeldReads held;
    /** The {@code sasl-init}'s mechanism; the loop's. */
    private String mechanism;
    /** The verified TLS client certificate, or null; read when the mechanisms are offered. */
    private X509Certificate peer;

    SaslExchange(SaslAuthenticator sasl, ChannelHandlerContext ctx, QueueExecutor loop, HeldReads held) {
        this.sasl = sasl;
        this.ctx = ctx;
        this.loop = loop;
        this.held = held;
    }

    /** Writes {@code sasl-mechanisms} to {@code out}. */
    void writeMechanisms(ByteBuf out) {
        peer = PeerCertificate.of(ctx.channel());
        SaslMechanisms mechanisms = new SaslMechanisms();
        mechanisms.setSaslServerMechanisms(sasl.mechanisms(peer));
        PerformativeCodec.writeFrame(out, AmqpFrame.TYPE_SASL, 0, mechanisms, 0);
    }

    /** The mechanism of the {@code sasl-init} read, null before it. */
    String mechanism() {
        return mechanism;
    }

    /**
     * Checks {@code init}'s credentials off the loop; {@code then} hears the result on the loop (null: the check
     * failed internally), after which held reads go on. A mechanism we do not offer is refused at once.
     *
     * @param afterwards runs once held reads have gone on (a flush)
     */
    void onInit(SaslInit init, Consumer<LoginResult> then, Runnable afterwards) {
        mechanism = init.getMechanism() == null ? null : init.getMechanism().toString();
        Binary response = init.getInitialResponse();
        Credentials credentials = sasl.read(mechanism, response == null ? null : java.util.Arrays.copyOfRange(
            response.getArray(), response.getArrayOffset(), response.getArrayOffset() + response.getLength()), peer);
        if (credentials == null) {
            then.accept(LoginResult.refused(LoginResult.Refusal.CREDENTIALS));
            return;
        }
        held.hold();
        sasl.login(credentials, PeerAddress.of(ctx.channel())).whenComplete((result, failure) -> loop.execute(() -> {
            then.accept(failure != null ? null : result);
            held.release();
            afterwards.run();
        }));
    }

    /**
     * The outcome code for a result [5.3.3.6]: {@code ok}; {@code auth} for the credentials; {@code sys-temp} for a
     * temporary refusal (the failed-login rate limit, authentication busy); {@code sys} for an internal failure
     * (null). A loopback-only user from afar gets {@code ok}, as in RabbitMQ: its refusal comes with {@code open},
     * where AMQP 1.0 has room for the reason ({@link #refusedAtOpen}).
     */
    static SaslCode code(LoginResult result) {
        if (result == null) {
            return SaslCode.SYS;
        }
        if (result.succeeded() || refusedAtOpen(result)) {
            return SaslCode.OK;
        }
        return result.refusal() == LoginResult.Refusal.CREDENTIALS ? SaslCode.AUTH : SaslCode.SYS_TEMP;
    }

    /** A refusal SASL does not say: the connection closes after {@code open} with the reason. */
    static boolean refusedAtOpen(LoginResult result) {
        return result != null && result.refusal() == LoginResult.Refusal.LOOPBACK_ONLY;
    }

    /** A {@code sasl-outcome} frame with {@code code}. */
    ByteBuf outcome(SaslCode code) {
        SaslOutcome outcome = new SaslOutcome();
        outcome.setCode(code);
        ByteBuf out = ctx.alloc().buffer(32);
        PerformativeCodec.writeFrame(out, AmqpFrame.TYPE_SASL, 0, outcome, 0);
        return out;
    }
}
