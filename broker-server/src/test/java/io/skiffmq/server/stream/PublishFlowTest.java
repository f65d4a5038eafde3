package io.skiffmq.server.stream;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.embedded.EmbeddedChannel;
import io.skiffmq.core.alarm.ResourceAlarms;
import io.skiffmq.server.connection.ReadSuspension;
import org.junit.jupiter.api.Test;

/**
 * A stream connection's publish credits as {@code rabbit_stream_reader} counts them: no longer read once
 * {@code initial_credits} messages are unconfirmed ({@code has_credits/1}: credits > 0), read again once the credits
 * left are more than {@code credits_required_for_unblocking} ({@code has_enough_credits_to_unblock/2}).
 */
class PublishFlowTest {
    private final EmbeddedChannel channel = new EmbeddedChannel();
    private final ReadSuspension<Object> reading = new ReadSuspension<>(channel, frame -> { });

    private PublishFlow flow(int initialCredits, int requiredForUnblocking) {
        StreamSettings settings = StreamSettings.defaults()
            .with("stream-initial-credits", Integer.toString(initialCredits))
            .with("stream-credits-required-for-unblocking", Integer.toString(requiredForUnblocking));
        return new PublishFlow(reading, settings, new ResourceAlarms(), () -> 1);
    }

    @Test
    void aConnectionIsNoLongerReadAtItsInitialCreditsAndAgainOnceMoreThanTheRequiredAreBack() {
        PublishFlow flow = flow(10, 4);
        flow.sent(9);
        flow.blockIfNeeded();
        assertThat(channel.config().isAutoRead()).as("1 credit left").isTrue();
        flow.sent(1);
        flow.blockIfNeeded();
        assertThat(reading.blocked()).isTrue();
        assertThat(channel.config().isAutoRead()).as("no credit left").isFalse();
        flow.answered(4);
        assertThat(channel.config().isAutoRead()).as("4 credits: not more than 4").isFalse();
        flow.answered(1);
        assertThat(reading.blocked()).isFalse();
        assertThat(channel.config().isAutoRead()).as("5 credits").isTrue();
        channel.finishAndReleaseAll();
    }

    @Test
    void settingsInEitherOrderStillUnblockOnceAllAreConfirmed() {
        PublishFlow flow = flow(3, 12_500);
        flow.sent(3);
        flow.blockIfNeeded();
        flow.answered(2);
        assertThat(reading.blocked()).as("one still unconfirmed").isTrue();
        flow.answered(1);
        assertThat(reading.blocked()).isFalse();
        assertThat(channel.config().isAutoRead()).isTrue();
        channel.finishAndReleaseAll();
    }
}
