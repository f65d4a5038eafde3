package io.skiffmq.server.amqp10;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The legal moves of links and sessions, and that every other move throws. */
class LifecycleStatesTest {

    @Test
    void linkStates() {
        assertThat(LinkState.ATTACHED.to(LinkState.DETACHED)).isEqualTo(LinkState.DETACHED);
        assertThat(LinkState.ATTACHED.to(LinkState.DETACH_SENT).to(LinkState.DETACHED)).isEqualTo(LinkState.DETACHED);
        assertThatThrownBy(() -> LinkState.DETACH_SENT.to(LinkState.ATTACHED)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> LinkState.DETACH_SENT.to(LinkState.DETACH_SENT)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> LinkState.DETACHED.to(LinkState.DETACH_SENT)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> LinkState.ATTACHED.to(LinkState.ATTACHED)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void sessionStates() {
        assertThat(SessionState.MAPPED.to(SessionState.UNMAPPED)).isEqualTo(SessionState.UNMAPPED);
        assertThat(SessionState.MAPPED.to(SessionState.END_SENT).to(SessionState.UNMAPPED))
            .isEqualTo(SessionState.UNMAPPED);
        assertThatThrownBy(() -> SessionState.END_SENT.to(SessionState.END_SENT)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> SessionState.END_SENT.to(SessionState.MAPPED)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> SessionState.UNMAPPED.to(SessionState.MAPPED)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aRefusedHandleStaysTakenUntilThePeersDetach() {
        LinkRegistry links = new LinkRegistry(new io.skiffmq.core.metrics.ConnectionCounters("amqp10"));
        links.refused(3, "r");
        assertThat(links.inUse(3)).isTrue();
        assertThat(links.get(3).state()).isEqualTo(LinkState.DETACH_SENT);
        assertThatThrownBy(() -> links.detachSent(3)).as("we detached already").isInstanceOf(IllegalStateException.class);
        assertThat(links.detached(3).state()).isEqualTo(LinkState.DETACHED);
        assertThat(links.inUse(3)).isFalse();
    }
}
