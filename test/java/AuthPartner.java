import com.sun.net.httpserver.HttpServer;
import java.io.ByteArrayOutputStream;
import java.math.BigDecimal;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.security.spec.PKCS8EncodedKeySpec;
import java.security.spec.X509EncodedKeySpec;
import java.util.Base64;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.crypto.Cipher;

/**
 * A partner's auth_url written with the JDK only (spec 5.6, D37, D50): decrypts the service's
 * request with RSA/ECB/PKCS1Padding (256-byte blocks), verifies SHA256withRSA with the service
 * public key, approves unless the amount is above 100, and answers encrypted to the service key in
 * 245-byte blocks and signed with its own key. Env: PARTNER_PRIVATE_KEY (PKCS#8 Base64),
 * SERVICE_PUBLIC_KEY (X.509 SPKI Base64). Prints the port it listens on.
 */
public class AuthPartner {
  static final Pattern TRANS_ID = Pattern.compile("\"transId\":\"([^\"]+)\"");
  static final Pattern AMOUNT = Pattern.compile("\"amount\":([0-9.]+)");
  static final Pattern FIELD = Pattern.compile("\"(data|sign)\"\\s*:\\s*\"([^\"]+)\"");

  public static void main(String[] args) throws Exception {
    KeyFactory kf = KeyFactory.getInstance("RSA");
    PrivateKey partnerKey = kf.generatePrivate(new PKCS8EncodedKeySpec(Base64.getDecoder().decode(System.getenv("PARTNER_PRIVATE_KEY"))));
    PublicKey serviceKey = kf.generatePublic(new X509EncodedKeySpec(Base64.getDecoder().decode(System.getenv("SERVICE_PUBLIC_KEY"))));
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/auth", exchange -> {
      try {
        String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
        String data = null, sign = null;
        Matcher m = FIELD.matcher(body);
        while (m.find()) { if (m.group(1).equals("data")) data = m.group(2); else sign = m.group(2); }
        Cipher dec = Cipher.getInstance("RSA/ECB/PKCS1Padding");
        dec.init(Cipher.DECRYPT_MODE, partnerKey);
        byte[] all = Base64.getDecoder().decode(data);
        ByteArrayOutputStream plain = new ByteArrayOutputStream();
        for (int at = 0; at < all.length; at += 256) plain.write(dec.doFinal(all, at, 256));
        Signature verifier = Signature.getInstance("SHA256withRSA");
        verifier.initVerify(serviceKey);
        verifier.update(plain.toByteArray());
        if (!verifier.verify(Base64.getDecoder().decode(sign))) throw new SecurityException("request not signed by the service");
        String request = plain.toString(StandardCharsets.UTF_8);
        Matcher t = TRANS_ID.matcher(request);
        Matcher a = AMOUNT.matcher(request);
        if (!t.find() || !a.find()) throw new IllegalArgumentException("request lacks transId or amount");
        boolean approved = new BigDecimal(a.group(1)).compareTo(new BigDecimal("100")) <= 0;
        byte[] answer = ("{\"transId\":\"" + t.group(1) + "\",\"approved\":" + approved + ",\"declineReason\":"
            + (approved ? "null" : "\"OVER_LIMIT\"") + "}").getBytes(StandardCharsets.UTF_8);
        Cipher enc = Cipher.getInstance("RSA/ECB/PKCS1Padding");
        enc.init(Cipher.ENCRYPT_MODE, serviceKey);
        ByteArrayOutputStream blocks = new ByteArrayOutputStream();
        for (int at = 0; at < answer.length; at += 245) blocks.write(enc.doFinal(answer, at, Math.min(245, answer.length - at)));
        Signature signer = Signature.getInstance("SHA256withRSA");
        signer.initSign(partnerKey);
        signer.update(answer);
        byte[] out = ("{\"data\":\"" + Base64.getEncoder().encodeToString(blocks.toByteArray()) + "\",\"sign\":\""
            + Base64.getEncoder().encodeToString(signer.sign()) + "\"}").getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().add("content-type", "application/json");
        exchange.sendResponseHeaders(200, out.length);
        exchange.getResponseBody().write(out);
      } catch (Exception e) {
        byte[] out = ("{\"error\":\"" + e.getClass().getSimpleName() + "\"}").getBytes(StandardCharsets.UTF_8);
        exchange.sendResponseHeaders(400, out.length);
        exchange.getResponseBody().write(out);
      } finally {
        exchange.close();
      }
    });
    server.start();
    System.out.println(server.getAddress().getPort());
    System.out.flush();
  }
}
