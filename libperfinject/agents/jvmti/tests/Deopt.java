// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
import java.io.InputStream;

/*
 * Deopt SECONDS: make HotSpot throw compiled code away, twice over.
 *
 * 1. Deopt.work() calls Shape.area() while Square is the only subclass
 *    of Shape loaded, so the JIT compiles the call on that assumption
 *    (class hierarchy analysis). Loading Circle breaks it: the compiled
 *    work() is made not entrant, and work(), still hot, is compiled
 *    again at another address.
 * 2. Gone.spin() is compiled in a class of a class loader of its own;
 *    dropping the loader and collecting garbage unloads the class and
 *    with it the compiled spin(): the JVM reports that code unloaded.
 *
 * Prints "phase NAME" as it goes, then "done" and idles SECONDS seconds
 * so that its registry can be read.
 */
public class Deopt {
	static abstract class Shape {
		abstract int area();
	}

	static final class Square extends Shape {
		final int s;

		Square(int s) { this.s = s; }
		int area() { return s * s; }
	}

	static final class Circle extends Shape {
		final int r;

		Circle(int r) { this.r = r; }
		int area() { return 3 * r * r; }
	}

	static int work(Shape s, int n)
	{
		int sum = 0;

		for (int i = 0; i < n; i++)
			sum += s.area() + i;
		return sum;
	}

	/* Defines Gone itself rather than asking its parent. */
	static class Isolated extends ClassLoader {
		Isolated() { super(Deopt.class.getClassLoader()); }

		protected Class<?> loadClass(String name, boolean resolve)
			throws ClassNotFoundException
		{
			if (!name.equals("Gone"))
				return super.loadClass(name, resolve);
			try (InputStream in = getParent()
					.getResourceAsStream("Gone.class")) {
				byte[] b = in.readAllBytes();

				return defineClass(name, b, 0, b.length);
			} catch (Exception e) {
				throw new ClassNotFoundException(name, e);
			}
		}
	}

	static long sink;

	static void heat(Shape s, long millis)
	{
		long end = System.nanoTime() + millis * 1000000;

		do
			sink += work(s, 10000);
		while (System.nanoTime() < end);
	}

	static void unloadGone() throws Exception
	{
		ClassLoader l = new Isolated();
		java.lang.reflect.Method spin =
			l.loadClass("Gone").getMethod("spin", int.class);

		for (int i = 0; i < 2000; i++)
			sink += (Integer)spin.invoke(null, 10000);
		spin = null;
		l = null;
		for (int i = 0; i < 3; i++) {
			System.gc();
			Thread.sleep(100);
		}
	}

	public static void main(String[] args) throws Exception
	{
		double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 1;

		System.out.println("phase square");
		heat(new Square(3), 1000);
		System.out.println("phase circle");
		sink += new Circle(2).area();
		heat(new Square(4), 1000);
		System.out.println("phase unload");
		unloadGone();
		System.out.println("done " + sink);
		System.out.flush();
		Thread.sleep((long)(seconds * 1000));
	}
}
