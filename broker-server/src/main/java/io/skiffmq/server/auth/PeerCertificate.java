package io.skiffmq.server.auth;

import io.netty.channel.Channel;
import io.netty.handler.ssl.SslHandler;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.security.auth.x500.X500Principal;

/**
 * The client certificate a TLS connection verified, and the user SASL EXTERNAL takes from it: the subject's
 * common name ({@code cn}, the default) or the whole subject DN in RFC 2253 form ({@code dn}). Stateless.
 */
public final class PeerCertificate {
    private PeerCertificate() {
    }

    /** The verified client certificate of {@code channel}; null without TLS or when the client presented none. */
    public static X509Certificate of(Channel channel) {
        SslHandler tls = channel.pipeline().get(SslHandler.class);
        if (tls == null) {
            return null;
        }
        try {
            Certificate[] chain = tls.engine().getSession().getPeerCertificates();
            return chain.length > 0 && chain[0] instanceof X509Certificate x509 ? x509 : null;
        } catch (SSLPeerUnverifiedException e) {
            return null;
        }
    }

    /** The user name {@code certificate} stands for; null when it has no common name (with {@code cn}). */
    public static String user(X509Certificate certificate, AuthSettings.ExternalUserFrom from) {
        String dn = certificate.getSubjectX500Principal().getName(X500Principal.RFC2253);
        if (from == AuthSettings.ExternalUserFrom.DN) {
            return dn;
        }
        try {
            // the most specific CN, the first in the DN: LdapName lists RDNs right to left
            java.util.List<Rdn> rdns = new LdapName(dn).getRdns();
            for (int i = rdns.size() - 1; i >= 0; i--) {
                Rdn rdn = rdns.get(i);
                if (rdn.getType().equalsIgnoreCase("CN")) {
                    return rdn.getValue().toString();
                }
            }
        } catch (InvalidNameException e) {
            return null;
        }
        return null;
    }
}
