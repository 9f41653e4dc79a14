import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.util.Base64;
import javax.crypto.Cipher;

/**
 * Writes RSA vectors made by Java's JCE (RSA/ECB/PKCS1Padding in 245-byte blocks, SHA256withRSA,
 * X509EncodedKeySpec / PKCS8EncodedKeySpec encodings) for test/authorization-java.test.ts.
 * Run once: javac -d /tmp/jce test/java/JceVectors.java && java -cp /tmp/jce JceVectors test/fixtures/rsa-java
 */
public class JceVectors {
  static String b64(byte[] b) { return Base64.getEncoder().encodeToString(b); }

  static byte[] encrypt(PublicKey key, byte[] plain) throws Exception {
    Cipher c = Cipher.getInstance("RSA/ECB/PKCS1Padding");
    c.init(Cipher.ENCRYPT_MODE, key);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (int at = 0; at < plain.length; at += 245) out.write(c.doFinal(plain, at, Math.min(245, plain.length - at)));
    return out.toByteArray();
  }

  static byte[] sign(PrivateKey key, byte[] data) throws Exception {
    Signature s = Signature.getInstance("SHA256withRSA");
    s.initSign(key);
    s.update(data);
    return s.sign();
  }

  public static void main(String[] args) throws Exception {
    KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
    g.initialize(2048);
    KeyPair service = g.generateKeyPair();
    KeyPair partner = g.generateKeyPair();
    String request = "{\"transId\":\"txjava0000000000001\",\"networkTransactionId\":\"net-java-1\",\"cardId\":\"cdjava\","
        + "\"organizationId\":\"orgjava\",\"subjectType\":\"CUSTOMER\",\"subjectId\":\"cusjava\",\"authType\":\"EXPEND\","
        + "\"amount\":12.50,\"currency\":\"USD\",\"billingAmount\":12.50,\"billingCurrency\":\"USD\","
        + "\"merchantName\":\"Caf\u00e9 Z\u00fcrich \u2014 long enough to need a second 245-byte block of RSA\","
        + "\"mcc\":\"5814\",\"merchantCountry\":\"CH\",\"channel\":\"POS\",\"transactionTime\":\"2026-11-24T00:00:00.000Z\","
        + "\"deadline\":\"2026-11-24T00:00:02.000Z\"}";
    String answer = "{\"transId\":\"txjava0000000000001\",\"approved\":false,\"declineReason\":\"OVER_BUDGET\"}";
    byte[] req = request.getBytes(StandardCharsets.UTF_8);
    byte[] ans = answer.getBytes(StandardCharsets.UTF_8);
    String json = "{\n"
        + "  \"servicePublicKey\": \"" + b64(service.getPublic().getEncoded()) + "\",\n"
        + "  \"servicePrivateKey\": \"" + b64(service.getPrivate().getEncoded()) + "\",\n"
        + "  \"partnerPublicKey\": \"" + b64(partner.getPublic().getEncoded()) + "\",\n"
        + "  \"partnerPrivateKey\": \"" + b64(partner.getPrivate().getEncoded()) + "\",\n"
        + "  \"requestPlaintext\": \"" + b64(req) + "\",\n"
        + "  \"requestData\": \"" + b64(encrypt(partner.getPublic(), req)) + "\",\n"
        + "  \"requestSign\": \"" + b64(sign(service.getPrivate(), req)) + "\",\n"
        + "  \"answerPlaintext\": \"" + b64(ans) + "\",\n"
        + "  \"answerData\": \"" + b64(encrypt(service.getPublic(), ans)) + "\",\n"
        + "  \"answerSign\": \"" + b64(sign(partner.getPrivate(), ans)) + "\"\n"
        + "}\n";
    Files.writeString(Path.of(args[0], "vectors.json"), json);
  }
}
