// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.IntUnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/*
 * Bench ROUNDS: a fixed amount of work through much of the JDK
 * (collections, streams and lambdas, regular expressions, formatting,
 * big integers, sorting), so that the JIT compiles many methods, each
 * of which the agent reports. Prints a checksum.
 */
public class Bench {
	static long sink;

	static void collections(int n)
	{
		Map<String, Integer> h = new HashMap<>();
		TreeMap<Integer, String> t = new TreeMap<>();
		List<Integer> l = new ArrayList<>();

		for (int i = 0; i < n; i++) {
			h.merge("k" + (i % 977), i, Integer::sum);
			t.put(i * 31 % 10007, Integer.toHexString(i));
			l.add(i ^ 0x5a5a);
		}
		l.sort(null);
		sink += h.size() + t.firstKey() + l.get(n / 2);
	}

	static void streams(int n)
	{
		IntUnaryOperator f = x -> x * x + 1;

		sink += IntStream.range(0, n).map(f).filter(x -> (x & 3) == 1)
			.boxed().collect(Collectors.groupingBy(x -> x % 17,
				Collectors.counting())).size();
	}

	static void text(int n)
	{
		Pattern p = Pattern.compile("([a-f]+)(\\d+)");
		StringBuilder sb = new StringBuilder();

		for (int i = 0; i < n; i++)
			sb.append(String.format("%s%d;", Integer.toHexString(i)
				.replaceAll("[0-9]", "a"), i));
		Matcher m = p.matcher(sb);
		while (m.find())
			sink += m.group(2).length();
	}

	static void numbers(int n)
	{
		BigInteger a = BigInteger.ONE;

		for (int i = 1; i < n; i++)
			a = a.multiply(BigInteger.valueOf(i)).mod(
				BigInteger.TWO.pow(521).subtract(BigInteger.ONE));
		sink += a.bitLength();
	}

	public static void main(String[] args)
	{
		int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 20;

		for (int r = 0; r < rounds; r++) {
			collections(20000);
			streams(50000);
			text(5000);
			numbers(3000);
		}
		System.out.println("checksum " + sink);
	}
}
