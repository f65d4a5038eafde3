package io.skiffmq.server;

import org.apache.qpid.proton.amqp.DescribedType;

/** A filter of a source's filter-set as a client sends it [3.5.8]: a described value, for raw-frame tests. */
record DescribedFilter(Object descriptor, Object described) implements DescribedType {
    @Override
    public Object getDescriptor() {
        return descriptor;
    }

    @Override
    public Object getDescribed() {
        return described;
    }
}
