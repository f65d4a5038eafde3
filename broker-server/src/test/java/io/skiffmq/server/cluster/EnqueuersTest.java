package io.skiffmq.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import org.junit.jupiter.api.Test;

/**
 * What a replicated queue knows of the numbers forwarding nodes sent it: exactly what it took, above a floor; a hole
 * (a number skipped, then resent later) is not taken until it comes; nothing below the floor counts as taken (a
 * resend of it may be a duplicate, never a loss); bounded in enqueuers and holes; the same after a snapshot.
 */
class EnqueuersTest {
    private static final long A = 0x1234_5678_9abc_def0L;
    private static final long B = -7;

    @Test
    void aNumberIsTakenExactlyWhenItCameWithHolesFilledOutOfOrder() {
        Enqueuers seen = new Enqueuers();
        assertThat(seen.has(A, 1)).isFalse();
        seen.took(A, 1);
        seen.took(A, 2);
        seen.took(A, 5); // 3 and 4 went to a leader that died before committing them
        assertThat(seen.has(A, 1)).isTrue();
        assertThat(seen.has(A, 2)).isTrue();
        assertThat(seen.has(A, 3)).isFalse();
        assertThat(seen.has(A, 4)).isFalse();
        assertThat(seen.has(A, 5)).isTrue();
        assertThat(seen.has(A, 6)).isFalse();
        assertThat(seen.has(B, 1)).as("another enqueuer's").isFalse();
        seen.took(A, 4); // resent behind 5
        assertThat(seen.has(A, 4)).isTrue();
        assertThat(seen.has(A, 3)).isFalse();
        seen.took(A, 3);
        assertThat(seen.has(A, 3)).isTrue();
    }

    @Test
    void numbersBelowTheFirstOneTakenOrTheForgottenHolesAreNotKnown() {
        Enqueuers seen = new Enqueuers();
        seen.took(A, 100);
        assertThat(seen.has(A, 99)).as("before the first taken here").isFalse();
        seen.took(A, 100 + Enqueuers.MAX_HOLES + 2); // more skipped than holes are kept
        assertThat(seen.has(A, 100)).as("below the new floor").isFalse();
        assertThat(seen.has(A, 100 + Enqueuers.MAX_HOLES + 2)).isTrue();

        Enqueuers holes = new Enqueuers();
        holes.took(A, 1);
        int skipped = Enqueuers.MAX_HOLES + 10;
        for (long n = 3; n <= 1 + 2L * skipped; n += 2) {
            holes.took(A, n); // every even one skipped: 10 more holes than are kept
        }
        assertThat(holes.has(A, 1 + 2L * skipped)).isTrue();
        assertThat(holes.has(A, 2L * skipped)).as("a recent hole").isFalse();
        assertThat(holes.has(A, 3)).as("taken, but below the floor the oldest holes left").isFalse();
        assertThat(holes.has(A, 19)).isFalse();
        assertThat(holes.has(A, 20)).as("the 10th hole, forgotten").isFalse();
        assertThat(holes.has(A, 21)).as("taken, just above the floor").isTrue();
        assertThat(holes.has(A, 22)).as("the oldest hole kept").isFalse();
    }

    @Test
    void theEnqueuerThatTookNothingForLongestIsForgottenFirst() {
        Enqueuers seen = new Enqueuers();
        for (long e = 0; e < Enqueuers.MAX_ENQUEUERS; e++) {
            seen.took(e, 1);
        }
        seen.took(0, 2); // enqueuer 0 is recent again; 1 is now the oldest
        seen.took(1000, 1);
        assertThat(seen.has(0, 2)).isTrue();
        assertThat(seen.has(1, 1)).isFalse();
        assertThat(seen.has(2, 1)).isTrue();
        assertThat(seen.has(1000, 1)).isTrue();
    }

    @Test
    void aCopyAndASnapshotKeepItAndGoTheirOwnWay() throws Exception {
        Enqueuers seen = new Enqueuers();
        seen.took(A, 1);
        seen.took(A, 4);
        seen.took(B, 10);
        Enqueuers copy = seen.copy();
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            seen.write(out);
        }
        Enqueuers read = Enqueuers.read(new DataInputStream(new ByteArrayInputStream(bytes.toByteArray())));
        seen.took(A, 2);
        for (Enqueuers kept : new Enqueuers[] {copy, read}) {
            assertThat(kept.has(A, 1)).isTrue();
            assertThat(kept.has(A, 2)).isFalse();
            assertThat(kept.has(A, 3)).isFalse();
            assertThat(kept.has(A, 4)).isTrue();
            assertThat(kept.has(B, 10)).isTrue();
        }
        assertThat(seen.has(A, 2)).isTrue();
    }
}
