package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.server.auth.AuthSettings;
import io.skiffmq.server.auth.PeerCertificate;
import org.junit.jupiter.api.Test;

/** The user SASL EXTERNAL takes from a client certificate: its subject's CN, or the whole subject DN. */
class PeerCertificateTest {
    @Test
    void theUserIsTheCommonNameOrTheWholeSubject() throws Exception {
        TestCertificates.Issued ca = TestCertificates.ca("Test CA");
        TestCertificates.Issued client = TestCertificates.client(ca, "alice");
        assertThat(PeerCertificate.user(client.certificate(), AuthSettings.ExternalUserFrom.CN)).isEqualTo("alice");
        assertThat(PeerCertificate.user(client.certificate(), AuthSettings.ExternalUserFrom.DN))
            .isEqualTo("CN=alice,O=SkiffMQ test clients");
    }

    @Test
    void aSubjectWithoutACommonNameNamesNoUser() throws Exception {
        TestCertificates.Issued ca = TestCertificates.ca("Test CA");
        TestCertificates.Issued client = TestCertificates.issued(ca, "C=NL,O=No Name");
        assertThat(PeerCertificate.user(client.certificate(), AuthSettings.ExternalUserFrom.CN)).isNull();
        assertThat(PeerCertificate.user(client.certificate(), AuthSettings.ExternalUserFrom.DN))
            .isEqualTo("O=No Name,C=NL");
    }
}
