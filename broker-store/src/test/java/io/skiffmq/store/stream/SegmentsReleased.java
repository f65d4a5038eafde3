package io.skiffmq.store.stream;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails a test that leaves a segment mapped once its logs, readers and buffers are closed: the mapped buffers and
 * file regions a reader hands out are not Netty-allocated, so the leak detector cannot see them; this counts them.
 */
final class SegmentsReleased implements BeforeEachCallback, AfterEachCallback {
    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(SegmentsReleased.class);

    @Override
    public void beforeEach(ExtensionContext context) {
        context.getStore(NAMESPACE).put("open", Segment.OPEN.get());
    }

    @Override
    public void afterEach(ExtensionContext context) {
        int before = context.getStore(NAMESPACE).get("open", Integer.class);
        assertThat(Segment.OPEN.get()).as("segments still mapped after the logs, readers and buffers were closed")
            .isEqualTo(before);
    }
}
